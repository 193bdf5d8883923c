import { hubFailureMessage, type FailureContext, type HubFailure } from './hub-failure';

const AT: FailureContext = {
  name: 'bge-small-en-v1.5',
  file: 'onnx/model_quantized.onnx',
  url: 'https://hf.example/Xenova/bge-small-en-v1.5/resolve/main/onnx/model_quantized.onnx',
  repo: 'Xenova/bge-small-en-v1.5',
  base: 'https://hf.example',
  tokenSent: false,
  size: 34_014_426,
  timeoutMs: 30_000,
};

describe('hubFailureMessage: one line naming what went wrong and the fix', () => {
  it.each<[HubFailure, Partial<FailureContext>, RegExp]>([
    [
      { kind: 'status', status: 404 },
      {},
      /^https:\/\/hf\.example\/Xenova\/.*model_quantized\.onnx was not found \(404\): .*MODELS_BASE_URL \(https:\/\/hf\.example\)/,
    ],
    [{ kind: 'status', status: 401 }, {}, /needs credentials \(401\): .* set MODELS_TOKEN/],
    [
      { kind: 'status', status: 403 },
      { tokenSent: true },
      /was refused \(403\) with the MODELS_TOKEN given/,
    ],
    [{ kind: 'status', status: 503 }, {}, /answered 503 .*try again later$/],
    [
      { kind: 'status', status: 418 },
      {},
      /answered 418 for .*, not the file: check MODELS_BASE_URL/,
    ],
    [
      { kind: 'unreachable', host: 'hf.example', code: 'ENOTFOUND' },
      {},
      /^cannot reach hf\.example \(ENOTFOUND\) .*MODELS_BASE_URL.*`agent-data models add bge-small-en-v1\.5 PATH`$/,
    ],
    [
      { kind: 'untrusted', host: 'hf.example', code: 'SELF_SIGNED_CERT_IN_CHAIN' },
      {},
      /NODE_EXTRA_CA_CERTS$/,
    ],
    [
      { kind: 'silent', host: 'hf.example' },
      {},
      /^no answer from hf\.example in 30 s for https:.*MODELS_BASE_URL.*`agent-data models add bge-small-en-v1\.5 PATH`$/,
    ],
    [
      { kind: 'silent', host: 'cdn.example', received: 13_600_000 },
      {},
      /^no data from cdn\.example for 30 s while downloading onnx\/model_quantized\.onnx \(13\.6 of 34\.0 MB kept\): run the same command again to resume/,
    ],
    [
      { kind: 'cut', received: 1_000_000 },
      { size: undefined },
      /was cut \(1\.0 MB kept\): run the same command again to resume$/,
    ],
    [{ kind: 'interrupted' }, {}, /^interrupted: nothing was installed$/],
    [{ kind: 'web-page' }, {}, /^the server answered a web page, not the file/],
    [{ kind: 'empty' }, {}, /empty file \(0 bytes\)/],
    [{ kind: 'redirects', max: 10 }, {}, /^more than 10 redirects/],
    [
      { kind: 'mismatch', digest: { algorithm: 'sha1', value: 'f'.repeat(40) } },
      {},
      /does not have the SHA-1 the server announced \(ffffffffffffffff…\): it was removed/,
    ],
    [{ kind: 'too-large', bytes: 3e9 }, {}, /is 3000000000 bytes, more than a model's file can be/],
    [
      { kind: 'size-changed', announced: 10, sent: 12 },
      {},
      /announced 10 bytes .* but sends 12: the file changed/,
    ],
  ])('%j', (failure, context, message) => {
    const line = hubFailureMessage(failure, { ...AT, ...context });
    expect(line).toMatch(message);
    expect(line).not.toContain('\n');
  });
});
