import {
  BadRequestException,
  PayloadTooLargeException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { isDatabaseUnavailable } from '../database/database-errors';
import { isJsonContentType, type JsonBodyOptions, readBody, readJsonBody } from './json-body';

/** A request-like stream carrying `body` in chunks, with the given headers. */
function aRequest(body: string | Buffer[], headers: Record<string, string> = {}): IncomingMessage {
  const stream = new PassThrough();
  const request = Object.assign(stream, { headers }) as unknown as IncomingMessage;
  const chunks = typeof body === 'string' ? [Buffer.from(body)] : body;
  setImmediate(() => {
    for (const chunk of chunks) stream.write(chunk);
    stream.end();
  });
  return request;
}

const JSON_TYPE = { 'content-type': 'application/json' };

describe('readJsonBody', () => {
  it('parses a JSON body', async () => {
    await expect(readJsonBody(aRequest('{"a":[1,"é"]}', JSON_TYPE), 100)).resolves.toEqual({
      a: [1, 'é'],
    });
  });

  it('reassembles multi-byte characters split across chunks', async () => {
    const bytes = Buffer.from('{"t":"文書"}');
    const request = aRequest([bytes.subarray(0, 8), bytes.subarray(8)], JSON_TYPE);
    await expect(readJsonBody(request, 100)).resolves.toEqual({ t: '文書' });
  });

  it('parses large bodies one per turn of the event loop, in arrival order', async () => {
    // Counts turns of the event loop: an immediate scheduled by an immediate runs in the next.
    let turn = 0;
    let counting = true;
    const count = () => {
      turn++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const big = (n: number) => JSON.stringify({ n, pad: 'x'.repeat(100 * 1024) });
    const parsed: { n: number; turn: number }[] = [];
    await Promise.all(
      [1, 2, 3].map((n) =>
        readJsonBody(aRequest(big(n), JSON_TYPE), 1024 * 1024).then((body) =>
          parsed.push({ n: (body as { n: number }).n, turn }),
        ),
      ),
    );
    counting = false;
    expect(parsed.map((p) => p.n)).toEqual([1, 2, 3]);
    expect(parsed[1].turn).toBeGreaterThan(parsed[0].turn);
    expect(parsed[2].turn).toBeGreaterThan(parsed[1].turn);
    // Small bodies are not held up.
    const small = [1, 2, 3].map((n) => readJsonBody(aRequest(`{"n":${n}}`, JSON_TYPE), 100));
    await expect(Promise.all(small)).resolves.toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it('resolves undefined for an empty body, whatever its type', async () => {
    await expect(readJsonBody(aRequest(''), 100)).resolves.toBeUndefined();
  });

  it('reads a body once and returns the same value after', async () => {
    const request = aRequest('{"a":1}', JSON_TYPE);
    const first = await readJsonBody(request, 100);
    await expect(readJsonBody(request, 100)).resolves.toBe(first);
  });

  it('refuses a declared Content-Length over the limit before reading', async () => {
    const request = aRequest('{}', { ...JSON_TYPE, 'content-length': '101' });
    await expect(readJsonBody(request, 100)).rejects.toThrow(
      new PayloadTooLargeException('request body is 101 bytes, the limit is 100'),
    );
  });

  it('refuses a streamed body once it passes the limit', async () => {
    const request = aRequest([Buffer.alloc(60, 32), Buffer.alloc(60, 32)], JSON_TYPE);
    await expect(readJsonBody(request, 100)).rejects.toThrow(PayloadTooLargeException);
  });

  it('accepts a body of exactly the limit', async () => {
    const body = `"${'x'.repeat(98)}"`;
    await expect(readJsonBody(aRequest(body, JSON_TYPE), 100)).resolves.toHaveLength(98);
  });

  it('refuses a body not declared as JSON with 415', async () => {
    await expect(
      readJsonBody(aRequest('{}', { 'content-type': 'text/plain' }), 100),
    ).rejects.toThrow(UnsupportedMediaTypeException);
    await expect(readJsonBody(aRequest('{}'), 100)).rejects.toThrow(/got none/);
  });

  it('refuses malformed JSON with 400', async () => {
    await expect(readJsonBody(aRequest('{"a":', JSON_TYPE), 100)).rejects.toThrow(
      BadRequestException,
    );
    await expect(readJsonBody(aRequest('{"a":', JSON_TYPE), 100)).rejects.toThrow(/malformed JSON/);
  });

  it('answers a body cut by its connection with 400, never with the socket error (no outage)', async () => {
    const stream = new PassThrough();
    const request = Object.assign(stream, { headers: JSON_TYPE }) as unknown as IncomingMessage;
    setImmediate(() => {
      stream.write('{"a":');
      stream.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    });
    const refused = await readJsonBody(request, 100).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BadRequestException);
    expect((refused as Error).message).toBe(
      'the request body could not be read to its end (aborted)',
    );
    expect(isDatabaseUnavailable(refused)).toBe(false);
  });
});

describe('readBody options: the differences between the REST and MCP edges', () => {
  /** Neither edge's choices: each case turns one option on. */
  const plain: JsonBodyOptions = {
    limit: 100,
    jsonSuffix: false,
    typeFirst: false,
    stripBom: false,
    closeOnOversize: false,
  };
  const read = (body: string, type: string, options: Partial<JsonBodyOptions> = {}) =>
    readBody(aRequest(body, { 'content-type': type }), { ...plain, ...options });

  it('jsonSuffix: an application/*+json body is JSON (REST) or refused with 415 (MCP)', async () => {
    const type = 'application/merge-patch+json';
    await expect(read('{}', type, { jsonSuffix: true })).resolves.toEqual({
      kind: 'json',
      value: {},
    });
    await expect(read('{}', type)).rejects.toMatchObject({ status: 415 });
  });

  it('typeFirst: the media type is checked even for an empty body (MCP), or only for a body (REST)', async () => {
    await expect(read('', 'text/plain', { typeFirst: true })).rejects.toMatchObject({
      status: 415,
    });
    await expect(read('', 'text/plain')).resolves.toEqual({ kind: 'empty' });
  });

  it('stripBom: a byte-order mark is dropped (MCP) or makes the JSON malformed (REST)', async () => {
    const body = '\uFEFF{"a":1}';
    await expect(read(body, 'application/json', { stripBom: true })).resolves.toEqual({
      kind: 'json',
      value: { a: 1 },
    });
    await expect(read(body, 'application/json')).resolves.toMatchObject({
      kind: 'malformed',
      blank: false,
    });
  });

  it('tells a blank body from malformed JSON', async () => {
    await expect(read('  ', 'application/json')).resolves.toMatchObject({
      kind: 'malformed',
      blank: true,
    });
  });

  it('closeOnOversize: the connection is closed after a 413 (REST) or kept (MCP)', async () => {
    for (const closeOnOversize of [true, false]) {
      const request = aRequest('{}', { 'content-length': '101' });
      const setHeader = jest.fn();
      Object.assign(request, { res: { headersSent: false, setHeader } });
      await expect(readBody(request, { ...plain, closeOnOversize })).rejects.toMatchObject({
        status: 413,
        declaredBytes: 101,
      });
      expect(setHeader.mock.calls).toEqual(closeOnOversize ? [['Connection', 'close']] : []);
    }
  });
});

describe('isJsonContentType', () => {
  it.each([
    ['application/json', true],
    ['Application/JSON; charset=utf-8', true],
    ['application/merge-patch+json', true],
    ['text/json', false],
    ['text/plain', false],
    ['application/x-www-form-urlencoded', false],
    [undefined, false],
  ])('%s → %s', (type, expected) => {
    expect(isJsonContentType(type)).toBe(expected);
  });
});
