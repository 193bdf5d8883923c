import http from 'node:http';
import type { Client } from 'pg';
import request from 'supertest';
import { createDocument, tableCounts, TableCounts } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';

const MiB = 1024 * 1024;

interface Refusal {
  status: number;
  code: string;
  field?: string;
  /** Text the message must contain (the limit, for TOO_LARGE). */
  mentions?: string;
}

/** Every refusal is a JSON error body, never a 500, never a stack trace. */
function expectRefusal(response: request.Response, expected: Refusal): void {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({
    status: expected.status,
    code: expected.code,
  });
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  if (expected.field !== undefined) expect(response.body.error.field).toBe(expected.field);
  if (expected.mentions !== undefined)
    expect(response.body.error.message).toContain(expected.mentions);
  expect(response.text).not.toMatch(/\bat .+\.(ts|js):\d+/);
}

/** An object `depth` levels deep. */
function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { d: value };
  return value;
}

describe('refused input changes nothing in the database', () => {
  let t: TestApp;
  let db: Client;
  let before: TableCounts;
  const existing = 'valid/doc.md';
  const big = 'valid/big.md';

  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
    await createDocument(t, { document_id: existing, body: 'alpha beta' });
    // Exactly the body limit: accepted.
    await createDocument(t, { document_id: big, body: `${'x'.repeat(MiB - 1)}y` });
    before = await tableCounts(db);
  });
  afterEach(async () => {
    expect(await tableCounts(db)).toEqual(before);
  });
  afterAll(() => t.close());

  const post = (body: unknown) =>
    request(t.baseUrl)
      .post('/documents')
      .send(body as object);

  describe('bad ids', () => {
    it.each([
      ['..'],
      ['.'],
      ['a/../b'],
      ['a/./b'],
      ['a//b'],
      ['/a'],
      ['a/'],
      ['/'],
      [''],
      ['a\u0000b'],
      ['a\u0001b'],
      ['a\nb'],
      ['a\u007fb'],
      ['a\\b'],
      ['a\ud800b'],
      ['x'.repeat(513)],
      ['é'.repeat(257)],
    ])('POST with document_id %j → 400 naming document_id', async (id) => {
      expectRefusal(await post({ document_id: id, body: 'text' }), {
        status: 400,
        code: 'INVALID_ARGUMENT',
        field: 'document_id',
      });
    });

    it.each([
      '/documents/%2E%2E',
      '/documents/a/%2E/b',
      '/documents/a%2F%2Fb',
      '/documents/a%5Cb',
      '/documents/a%00b',
      '/documents/a%0Ab',
      '/documents/a%2F',
      `/documents/${'x'.repeat(513)}`,
    ])('GET, PUT, PATCH, DELETE, restore, history of %s → 400', async (path) => {
      expectRefusal(await request(t.baseUrl).get(path), { status: 400, code: 'INVALID_ARGUMENT' });
      expectRefusal(await request(t.baseUrl).put(path).send({ body: 'x' }), {
        status: 400,
        code: 'INVALID_ARGUMENT',
      });
      expectRefusal(await request(t.baseUrl).patch(path).send({ old_str: 'a', new_str: 'b' }), {
        status: 400,
        code: 'INVALID_ARGUMENT',
      });
      expectRefusal(await request(t.baseUrl).delete(path), {
        status: 400,
        code: 'INVALID_ARGUMENT',
      });
      expectRefusal(await request(t.baseUrl).post(`${path}/restore`), {
        status: 400,
        code: 'INVALID_ARGUMENT',
      });
      expectRefusal(await request(t.baseUrl).get(`${path}/history`), {
        status: 400,
        code: 'INVALID_ARGUMENT',
      });
    });

    it('answers a malformed percent-encoding with 400 JSON', async () => {
      expectRefusal(await request(t.baseUrl).get('/documents/a%E0%A4%A'), {
        status: 400,
        code: 'INVALID_ARGUMENT',
      });
      expectRefusal(await request(t.baseUrl).put('/documents/a%C0%AF').send({ body: 'x' }), {
        status: 400,
        code: 'INVALID_ARGUMENT',
      });
    });
  });

  describe('limits', () => {
    it('refuses a body over 1 MiB with 413 TOO_LARGE naming the limit', async () => {
      const body = 'x'.repeat(MiB + 1);
      expectRefusal(await post({ document_id: 'too/large.md', body }), {
        status: 413,
        code: 'TOO_LARGE',
        field: 'body',
        mentions: 'the limit is 1048576',
      });
      expectRefusal(await request(t.baseUrl).put(`/documents/${existing}`).send({ body }), {
        status: 413,
        code: 'TOO_LARGE',
        field: 'body',
      });
    });

    it('counts the body limit in UTF-8 bytes', async () => {
      const response = await post({ document_id: 'too/wide.md', body: 'é'.repeat(MiB / 2 + 1) });
      expectRefusal(response, { status: 413, code: 'TOO_LARGE', field: 'body' });
      expect(response.body.error).toMatchObject({ limit: MiB, actual: MiB + 2 });
    });

    it('refuses a patch whose result would pass the body limit', async () => {
      expectRefusal(
        await request(t.baseUrl).patch(`/documents/${big}`).send({ old_str: 'y', new_str: 'yy' }),
        { status: 413, code: 'TOO_LARGE', field: 'body', mentions: '1048576' },
      );
    });

    it('refuses a request over MAX_REQUEST_BYTES with 413 before reading it', async () => {
      const body = 'x'.repeat(2 * MiB);
      expectRefusal(await post({ document_id: 'too/huge.md', body }), {
        status: 413,
        code: 'TOO_LARGE',
        mentions: `the limit is ${2 * MiB}`,
      });
    });

    it('refuses a streamed (chunked) request over the limit and closes its connection', async () => {
      const url = new URL(t.baseUrl);
      const outcome = await new Promise<{
        status?: number;
        connection?: string;
        body: string;
        closed: boolean;
      }>((resolve) => {
        const result = {
          status: undefined as number | undefined,
          connection: undefined as string | undefined,
          body: '',
          closed: false,
        };
        const req = http.request({
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/documents',
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        });
        req.on('response', (res) => {
          result.status = res.statusCode;
          result.connection = res.headers.connection;
          res.on('data', (chunk) => (result.body += chunk));
        });
        // The server closes the socket once the 413 is out; the client's writes then fail.
        req.on('close', () => resolve({ ...result, closed: true }));
        req.on('error', () => undefined);
        req.write('{"document_id":"too/streamed.md","body":"');
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const pump = (left: number): void => {
          if (left === 0 || req.destroyed) return void req.end('"}');
          if (req.write(chunk)) setImmediate(() => pump(left - 1));
          else req.once('drain', () => pump(left - 1));
        };
        pump(48);
      });
      expect(outcome.status).toBe(413);
      expect(JSON.parse(outcome.body).error.code).toBe('TOO_LARGE');
      expect(outcome.connection).toBe('close');
      expect(outcome.closed).toBe(true);
    });

    it.each([
      ['title', { title: 't'.repeat(301) }, 413, 'TOO_LARGE', '300'],
      ['tags', { tags: Array.from({ length: 51 }, (_, i) => `tag${i}`) }, 413, 'TOO_LARGE', '50'],
      ['metadata', { metadata: { blob: 'm'.repeat(64 * 1024) } }, 413, 'TOO_LARGE', '65536'],
      ['tags[0]', { tags: ['x'.repeat(101)] }, 400, 'INVALID_ARGUMENT', '100'],
      ['metadata', { metadata: nested(65) as object }, 400, 'INVALID_ARGUMENT', '64 levels'],
    ])('refuses %s over its limit, naming the limit', async (field, extra, status, code, limit) => {
      expectRefusal(await post({ document_id: 'too/much.md', body: 'b', ...extra }), {
        status,
        code,
        field,
        mentions: limit,
      });
    });

    it('accepts metadata nested 64 levels deep', async () => {
      const id = 'deep/metadata.md';
      await post({ document_id: id, body: 'b', metadata: nested(64) }).expect(201);
      // Put the counts back in line for the afterEach check.
      before = await tableCounts(db);
    });
  });

  describe('wrong types, unknown fields, malformed bodies', () => {
    it.each([
      [{ document_id: 5, body: 'b' }, 'document_id'],
      [{ body: 'b' }, 'document_id'],
      [{ document_id: 'a.md' }, 'body'],
      [{ document_id: 'a.md', body: 5 }, 'body'],
      [{ document_id: 'a.md', body: null }, 'body'],
      [{ document_id: 'a.md', body: 'b', title: 5 }, 'title'],
      [{ document_id: 'a.md', body: 'b', tags: 'x' }, 'tags'],
      [{ document_id: 'a.md', body: 'b', tags: ['ok', 1] }, 'tags[1]'],
      [{ document_id: 'a.md', body: 'b', tags: [' '] }, 'tags[0]'],
      [{ document_id: 'a.md', body: 'b', metadata: [] }, 'metadata'],
      [{ document_id: 'a.md', body: 'b', metadata: 'x' }, 'metadata'],
      [{ document_id: 'a.md', body: 'b', colour: 'red' }, 'colour'],
      [{ document_id: 'a.md', body: 'a\u0000b' }, 'body'],
      [{ document_id: 'a.md', body: 'b', title: 'a\nb' }, 'title'],
      [{ document_id: 'a.md', body: 'b', metadata: { k: 'a\u0000b' } }, 'metadata'],
      [{ document_id: 'a.md', body: 'b', metadata: { 'a\u0000': 1 } }, 'metadata'],
    ])('POST %j → 400 naming %s', async (body, field) => {
      expectRefusal(await post(body), { status: 400, code: 'INVALID_ARGUMENT', field });
    });

    it.each([
      [{ body: 5 }, 'body'],
      [{ body: 'x', expected_revision: 0 }, 'expected_revision'],
      [{ body: 'x', expected_revision: '1' }, 'expected_revision'],
      [{ body: 'x', expected_revision: 1.5 }, 'expected_revision'],
      [{ body: 'x', expected_revision: 2 ** 31 }, 'expected_revision'],
      [{ body: 'x', document_id: 'other.md' }, 'document_id'],
      [{ tags: [null] }, 'tags[0]'],
    ])('PUT %j → 400 naming %s', async (body, field) => {
      expectRefusal(await request(t.baseUrl).put(`/documents/${existing}`).send(body), {
        status: 400,
        code: 'INVALID_ARGUMENT',
        field,
      });
    });

    it.each([
      [{ old_str: 'alpha' }, 'new_str'],
      [{ new_str: 'x' }, 'old_str'],
      [{ old_str: 5, new_str: 'x' }, 'old_str'],
      [{ old_str: 'alpha', new_str: 'x', replace_all: 'yes' }, 'replace_all'],
      [{ old_str: 'alpha', new_str: 'x', expected_revision: -1 }, 'expected_revision'],
      [{ old_str: 'alpha', new_str: 'x', regex: true }, 'regex'],
      [{ old_str: 'alpha', new_str: 'a\u0000' }, 'body'],
    ])('PATCH %j → 400 naming %s', async (body, field) => {
      expectRefusal(await request(t.baseUrl).patch(`/documents/${existing}`).send(body), {
        status: 400,
        code: 'INVALID_ARGUMENT',
        field,
      });
    });

    it.each([
      ['{"document_id": "a.md", "body": '],
      ['{document_id: "a.md"}'],
      ["{'document_id': 'a.md'}"],
      ['\uFEFF{"document_id": "a.md", "body": "b"}'],
      ['{"document_id": "a.md", "body": "b"} trailing'],
    ])('malformed JSON %j → 400', async (text) => {
      const response = await request(t.baseUrl)
        .post('/documents')
        .set('Content-Type', 'application/json')
        .send(text);
      expectRefusal(response, { status: 400, code: 'INVALID_ARGUMENT' });
      expect(response.body.error.message).toMatch(/malformed JSON/);
    });

    it.each([['[]'], ['"text"'], ['42'], ['null']])(
      'a JSON %s instead of an object → 400',
      async (text) => {
        const response = await request(t.baseUrl)
          .post('/documents')
          .set('Content-Type', 'application/json')
          .send(text);
        expectRefusal(response, { status: 400, code: 'INVALID_ARGUMENT', field: 'body' });
      },
    );

    it('refuses an empty POST body naming what is required', async () => {
      const response = await request(t.baseUrl).post('/documents');
      expectRefusal(response, { status: 400, code: 'INVALID_ARGUMENT', field: 'body' });
    });

    it.each([
      ['text/plain', '{"document_id":"a.md","body":"b"}'],
      ['application/x-www-form-urlencoded', 'document_id=a.md&body=b'],
      ['text/html', '<p>hi</p>'],
    ])('refuses a %s body with 415', async (type, text) => {
      for (const send of [
        request(t.baseUrl).post('/documents'),
        request(t.baseUrl).put(`/documents/${existing}`),
        request(t.baseUrl).patch(`/documents/${existing}`),
      ]) {
        const response = await send.set('Content-Type', type).send(text);
        expectRefusal(response, { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
      }
    });
  });

  describe('values PostgreSQL would refuse', () => {
    it('answers 400, never 500, for metadata holding a lone surrogate', async () => {
      const response = await request(t.baseUrl)
        .post('/documents')
        .set('Content-Type', 'application/json')
        .send('{"document_id":"pg/surrogate.md","body":"b","metadata":{"k":"\\ud800"}}');
      expectRefusal(response, { status: 400, code: 'INVALID_ARGUMENT', field: 'metadata' });
    });

    it('answers 400, never 500, for a restore revision past the integer range', async () => {
      const response = await request(t.baseUrl)
        .post(`/documents/${existing}/restore`)
        .send({ revision: 1e12 });
      expectRefusal(response, { status: 400, code: 'INVALID_ARGUMENT', field: 'revision' });
    });

    it('answers 400 for list and history paging past the integer range', async () => {
      expectRefusal(await request(t.baseUrl).get('/documents?offset=99999999999'), {
        status: 400,
        code: 'INVALID_ARGUMENT',
        field: 'offset',
      });
      expectRefusal(
        await request(t.baseUrl).get(`/documents/${existing}/history?offset=99999999999`),
        {
          status: 400,
          code: 'INVALID_ARGUMENT',
          field: 'offset',
        },
      );
    });
  });
});
