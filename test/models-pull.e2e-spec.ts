import { getRandomPort } from 'get-port-please';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { agentData, agentDataProcess } from './support/agent-data-cli';
import { FakeHub } from './support/fake-hub';
import { describeWithModels, JARS, unpackJar } from './support/test-models';
import { tinyOnnx, tinyTokenizer } from './support/tiny-model';

const REPO = 'Xenova/bge-small-en-v1.5';
const MODEL = 'onnx/model_quantized.onnx';
const TOKENIZER = 'tokenizer.json';

/**
 * `agent-data models pull` against a local server playing the Hugging Face hub and its CDN
 * (test/support/fake-hub.ts): every way a download goes wrong ends in one line naming the
 * fix and nothing installed; with real model files (test/support/test-models.ts), a pull
 * installs a model that loads, a second one finds it up to date, and a cut one resumes.
 */
describe('agent-data models pull: what goes wrong', () => {
  let hub: FakeHub;
  let base: string;
  let dir: string;
  let modelsDir: string;
  // In this process, but for a pull that gets as far as loading the model (agent-data-cli.ts).
  const pull = (env: Record<string, string> = {}, by = agentData) =>
    by(['models', 'pull', 'bge-small-en-v1.5'], {
      MODELS_DIR: modelsDir,
      MODELS_BASE_URL: base,
      MODELS_TIMEOUT_MS: '1000',
      MODELS_TOKEN: '',
      EMBEDDINGS_MODEL: '',
      ...env,
    });
  /** Exit code 1, one line matching `reason` (no stack), no model installed. */
  const expectFailure = async (result: Awaited<ReturnType<typeof pull>>, reason: RegExp) => {
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr.trimEnd()).toMatch(reason);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(modelsDir, 'bge-small-en-v1.5'))).toBe(false);
  };
  const someBytes = () => randomBytes(200_000);

  beforeAll(async () => {
    hub = new FakeHub();
    base = await hub.start();
    dir = mkdtempSync(join(tmpdir(), 'agent-data-models-pull-'));
  });
  beforeEach(() => {
    modelsDir = join(dir, `models-${randomBytes(4).toString('hex')}`);
    hub.files.clear();
    hub.requests.length = 0;
  });
  afterAll(async () => {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the models it knows when asked for another', async () => {
    const result = await agentData(['models', 'pull', 'gte-large'], { MODELS_DIR: modelsDir });
    await expectFailure(result, /^agent-data: no model is known by the name "gte-large" \(known: /);
  });

  it('names the URL that is not there (404), and MODELS_BASE_URL', async () => {
    await expectFailure(
      await pull(),
      new RegExp(
        `^agent-data: ${base}/${REPO}/resolve/main/${MODEL} was not found \\(404\\): ${REPO} has no such file at that revision, or MODELS_BASE_URL \\(${base}\\) is not Hugging Face or a mirror of it$`,
      ),
    );
    expect(existsSync(modelsDir) ? readdirSync(modelsDir) : []).toEqual([]);
  });

  it('refuses a file whose hash is not the one announced, and removes it', async () => {
    hub.serve(REPO, MODEL, { data: someBytes(), lfs: true, announce: 'ab'.repeat(32) });
    hub.serve(REPO, TOKENIZER, { data: Buffer.from('{}') });
    await expectFailure(
      await pull(),
      /^agent-data: the downloaded onnx\/model_quantized\.onnx does not have the SHA-256 the server announced \(abababababababab…\): it was removed; run the same command again/,
    );
    expect(readdirSync(modelsDir)).toEqual([]);
  });

  it('refuses a web page answered for the file', async () => {
    hub.serve(REPO, MODEL, { data: someBytes(), lfs: true, webPage: true });
    hub.serve(REPO, TOKENIZER, { data: Buffer.from('{}') });
    await expectFailure(
      await pull(),
      /^agent-data: the server answered a web page, not the file, for .*\/onnx\/model_quantized\.onnx: MODELS_BASE_URL/,
    );
  });

  it('refuses an empty file', async () => {
    hub.serve(REPO, MODEL, { data: Buffer.alloc(0), lfs: true });
    hub.serve(REPO, TOKENIZER, { data: Buffer.from('{}') });
    await expectFailure(
      await pull(),
      /the server sent an empty file \(0 bytes\) for .*model_quantized\.onnx/,
    );
  });

  it('gives up on a server that sends nothing for MODELS_TIMEOUT_MS, keeping nothing installed', async () => {
    hub.serve(REPO, MODEL, { data: someBytes(), lfs: true, silent: true });
    hub.serve(REPO, TOKENIZER, { data: Buffer.from('{}') });
    const started = Date.now();
    const result = await pull();
    await expectFailure(
      result,
      /^agent-data: no data from 127\.0\.0\.1:\d+ for 1 s while downloading onnx\/model_quantized\.onnx \(0\.0 of 0\.2 MB kept\): run the same command again to resume \(MODELS_TIMEOUT_MS sets the wait\)$/,
    );
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('says the hub cannot be reached, and what to do without it', async () => {
    const closed = `http://127.0.0.1:${await getRandomPort('127.0.0.1')}`;
    await expectFailure(
      await pull({ MODELS_BASE_URL: closed }),
      /^agent-data: cannot reach 127\.0\.0\.1:\d+ \(ECONNREFUSED\) to download bge-small-en-v1\.5: check the network, or set MODELS_BASE_URL to a mirror .*`agent-data models add bge-small-en-v1\.5 PATH`$/,
    );
  });

  it('asks for MODELS_TOKEN for a gated repository, and says when the one given is refused', async () => {
    hub.serve(REPO, MODEL, { data: someBytes(), lfs: true, token: 'hf_right' });
    await expectFailure(
      await pull(),
      /needs credentials \(401\): Xenova\/bge-small-en-v1\.5 is gated or private, or the mirror asks for a login; set MODELS_TOKEN/,
    );
    const refused = await pull({ MODELS_TOKEN: 'hf_wrong_token' });
    await expectFailure(refused, /was refused \(401\) with the MODELS_TOKEN given/);
    expect(refused.stderr).not.toContain('hf_wrong_token');
  });

  it('stops following redirects after ten', async () => {
    hub.serve(REPO, MODEL, { data: someBytes(), loop: true });
    await expectFailure(await pull(), /more than 10 redirects for .*model_quantized\.onnx/);
    expect(hub.requests).toHaveLength(11);
  });

  it('refuses to run beside another pull of the same model', async () => {
    hub.serve(REPO, MODEL, { data: someBytes(), lfs: true });
    const partial = join(modelsDir, '.partial', 'bge-small-en-v1.5');
    mkdirSync(partial, { recursive: true });
    const release = await lock(partial, { lockfilePath: `${partial}.lock`, realpath: false });
    try {
      await expectFailure(
        await pull(),
        /^agent-data: another `agent-data models pull bge-small-en-v1\.5` is running on this MODELS_DIR: let it finish, or stop it and run this again$/,
      );
      expect(hub.requests).toEqual([]);
    } finally {
      await release();
    }
  });

  it('keeps what a cut download received, says how to resume it, and models list shows it', async () => {
    const data = someBytes();
    hub.serve(REPO, MODEL, { data, lfs: true, cutAt: 0.4 });
    hub.serve(REPO, TOKENIZER, { data: Buffer.from('{}') });
    await expectFailure(
      await pull(),
      /^agent-data: the download of onnx\/model_quantized\.onnx was cut \(0\.\d of 0\.2 MB kept\): run the same command again to resume$/,
    );
    // Every byte sent before the connection went (40 %), however busy the machine.
    const kept = statSync(join(modelsDir, '.partial', 'bge-small-en-v1.5', 'model.onnx.part')).size;
    expect(kept).toBe(Math.floor(data.length * 0.4));
    const list = await agentData(['models', 'list'], { MODELS_DIR: modelsDir });
    expect(list.stdout).toContain(
      `a download of bge-small-en-v1.5 waits: ${(kept / 1e6).toFixed(1)} of 0.2 MB received; \`agent-data models pull bge-small-en-v1.5\` resumes it`,
    );
  });

  it('starts afresh when the server answers a range request with the whole file', async () => {
    // A small encoder of the right shape (test/support/tiny-model.ts): it loads and runs, so
    // only its vector of the check text tells it is not bge-small-en-v1.5 once it is whole.
    const model = tinyOnnx({ width: 384 });
    hub.serve(REPO, MODEL, { data: model, lfs: true, cutAt: 0.4, ignoresRanges: true });
    hub.serve(REPO, TOKENIZER, { data: Buffer.from(tinyTokenizer()) });
    expect((await pull()).stderr).toMatch(/was cut/);
    const second = await pull({}, agentDataProcess);
    const asked = hub.requests.filter((r) => r.server === 'cdn' && r.method === 'GET');
    expect(asked.map((r) => r.headers.range)).toEqual([
      undefined,
      `bytes=${Math.floor(model.length * 0.4)}-`,
    ]);
    // Whole and as announced (its SHA-256 checked), then refused as another model's files.
    await expectFailure(
      second,
      new RegExp(
        `^agent-data: the files of ${REPO} at ${base} are not bge-small-en-v1\\.5 \\(they were removed\\): their embedding of the check text differs \\(cosine -?\\d\\.\\d\\d\\)$`,
      ),
    );
    expect(readdirSync(modelsDir)).toEqual([]);
  });
});

describeWithModels('the tests of models pull with real models')(
  'agent-data models pull, real models',
  () => {
    let hub: FakeHub;
    let base: string;
    let dir: string;
    let files: { model: Buffer; tokenizer: Buffer };
    // A process for a pull that loads the model, this one for the others (agent-data-cli.ts).
    const pull = (modelsDir: string, args: string[] = [], by = agentDataProcess) =>
      by(['models', 'pull', 'bge-small-en-v1.5', ...args], {
        MODELS_DIR: modelsDir,
        MODELS_BASE_URL: base,
        MODELS_TOKEN: 'hf_the_token',
        EMBEDDINGS_MODEL: '',
      });

    beforeAll(async () => {
      hub = new FakeHub();
      base = await hub.start();
      dir = mkdtempSync(join(tmpdir(), 'agent-data-models-pull-real-'));
      const unpacked = await unpackJar(JARS.bge, dir);
      files = { model: readFileSync(unpacked.model), tokenizer: readFileSync(unpacked.tokenizer) };
    });
    beforeEach(() => {
      hub.requests.length = 0;
    });
    afterAll(async () => {
      await hub.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('installs a model that loads, its token sent to the hub and never to the CDN; a second pull finds it up to date', async () => {
      hub.serve(REPO, MODEL, { data: files.model, lfs: true, token: 'hf_the_token' });
      hub.serve(REPO, TOKENIZER, { data: files.tokenizer, token: 'hf_the_token' });
      const modelsDir = join(dir, 'clean');
      const result = await pull(modelsDir);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toBe(
        `installed bge-small-en-v1.5 (34.7 MB) in ${join(modelsDir, 'bge-small-en-v1.5')}, from ${base}/${REPO}/resolve/main\n` +
          'received 34.7 MB; each file checked against the hash the server announced\n' +
          `the server uses it from its next start: bge-small-en-v1.5, the one model installed in ${modelsDir}\n`,
      );
      expect(readdirSync(modelsDir)).toEqual(['bge-small-en-v1.5']);
      expect(hub.requests.map((r) => `${r.server} ${r.method} ${r.path}`)).toEqual([
        `hub HEAD /${REPO}/resolve/main/${MODEL}`,
        `cdn HEAD /${REPO}/resolve/main/${MODEL}`,
        `hub HEAD /${REPO}/resolve/main/${TOKENIZER}`,
        `hub GET /${REPO}/resolve/main/${MODEL}`,
        `cdn GET /${REPO}/resolve/main/${MODEL}`,
        `hub GET /${REPO}/resolve/main/${TOKENIZER}`,
      ]);
      for (const seen of hub.requests) {
        expect(seen.headers.authorization).toBe(
          seen.server === 'hub' ? 'Bearer hf_the_token' : undefined,
        );
      }

      const list = JSON.parse(
        (await agentDataProcess(['models', 'list', '--check', '--json'], { MODELS_DIR: modelsDir }))
          .stdout,
      );
      expect(list.installed).toEqual([
        expect.objectContaining({
          name: 'bge-small-en-v1.5',
          source: `${base}/${REPO}/resolve/main`,
          check: { loads: true },
        }),
      ]);

      hub.requests.length = 0;
      const again = await pull(modelsDir, ['--json'], agentData);
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({
        name: 'bge-small-en-v1.5',
        up_to_date: true,
        download: { 'model.onnx': { received: 0, verified: 'sha256' } },
      });
      expect(hub.requests.filter((r) => r.method === 'GET')).toEqual([]);
    });

    it('mends a damaged install, saying it replaced it', async () => {
      hub.serve(REPO, MODEL, { data: files.model, lfs: true });
      hub.serve(REPO, TOKENIZER, { data: files.tokenizer });
      const modelsDir = join(dir, 'damaged');
      const added = await agentDataProcess(['models', 'add', 'bge-small-en-v1.5', JARS.bge], {
        MODELS_DIR: modelsDir,
        EMBEDDINGS_MODEL: '',
      });
      expect(added.code).toBe(0);
      const installedOn = JSON.parse(
        readFileSync(join(modelsDir, 'bge-small-en-v1.5', 'model.json'), 'utf8'),
      ).installed_at.slice(0, 10);
      truncateSync(join(modelsDir, 'bge-small-en-v1.5', 'model.onnx'), 1000);
      const result = await pull(modelsDir);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout.split('\n').slice(0, 2)).toEqual([
        `installed bge-small-en-v1.5 (34.7 MB) in ${join(modelsDir, 'bge-small-en-v1.5')}, from ${base}/${REPO}/resolve/main`,
        `replaced the installed bge-small-en-v1.5 (from ${JARS.bge}, installed ${installedOn})`,
      ]);
      expect(statSync(join(modelsDir, 'bge-small-en-v1.5', 'model.onnx')).size).toBe(
        files.model.length,
      );
    });

    it('resumes a download cut at 40 % with a range request, and installs', async () => {
      hub.serve(REPO, MODEL, { data: files.model, lfs: true, cutAt: 0.4 });
      hub.serve(REPO, TOKENIZER, { data: files.tokenizer });
      const modelsDir = join(dir, 'resumed');
      const first = await pull(modelsDir, [], agentData);
      expect(first.code).toBe(1);
      expect(first.stderr).toMatch(
        /was cut \(\d+\.\d of 34\.0 MB kept\): run the same command again/,
      );
      expect(existsSync(join(modelsDir, 'bge-small-en-v1.5'))).toBe(false);
      const kept = statSync(
        join(modelsDir, '.partial', 'bge-small-en-v1.5', 'model.onnx.part'),
      ).size;
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThanOrEqual(Math.floor(files.model.length * 0.4));

      hub.requests.length = 0;
      const second = await pull(modelsDir, ['--json']);
      expect(second).toMatchObject({ code: 0, stderr: '' });
      const ranged = hub.requests.find((r) => r.server === 'cdn' && r.method === 'GET');
      expect(ranged?.headers.range).toBe(`bytes=${kept}-`);
      expect(ranged?.headers['if-range']).toMatch(/^"[0-9a-f]{32}"$/);
      expect(JSON.parse(second.stdout)).toMatchObject({
        up_to_date: false,
        download: {
          'model.onnx': { received: files.model.length - kept, resumed: kept, verified: 'sha256' },
          'tokenizer.json': { received: files.tokenizer.length, resumed: 0, verified: 'sha1' },
        },
      });
      expect(readdirSync(modelsDir)).toEqual(['bge-small-en-v1.5']);
    });
  },
);
