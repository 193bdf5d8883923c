import type { Express } from 'express';
import { connect } from 'node:net';
import { startTestApp, TestApp } from './support/app';
import { comparable, send } from './support/mcp-http';

const ADMIN_KEY = 'rest-fast-admin-key-0123456';
const READER_KEY = 'rest-fast-reader-key-012345';

/** GET requests along every branch the guard, the two handlers and the filter take. */
const CASES: Array<[string, string, Record<string, string>]> = [
  ['a listing', '/documents?prefix=fast/&limit=2', { 'X-API-Key': ADMIN_KEY }],
  ['a listing, no query', '/documents', { Authorization: `Bearer ${ADMIN_KEY}` }],
  [
    'a listing, second page',
    '/documents?prefix=fast/&limit=2&offset=2',
    { 'X-API-Key': ADMIN_KEY },
  ],
  ['a listing by path', '/documents?path=fast/', { 'X-API-Key': ADMIN_KEY }],
  ['a listing with a repeated prefix', '/documents?prefix=a&prefix=b', { 'X-API-Key': ADMIN_KEY }],
  ['a listing with a bad limit', '/documents?limit=abc', { 'X-API-Key': ADMIN_KEY }],
  ['a listing with an unknown parameter', '/documents?colour=red', { 'X-API-Key': ADMIN_KEY }],
  ['a listing without a key', '/documents', {}],
  ['a listing with a wrong key', '/documents', { 'X-API-Key': 'wrong-key-0123456789' }],
  ['a listing with a key that is not admin', '/documents', { 'X-API-Key': READER_KEY }],
  ['a document', '/documents/fast/one.md', { 'X-API-Key': ADMIN_KEY }],
  ['a document at the top level', '/documents/top.md', { 'X-API-Key': ADMIN_KEY }],
  ['a document with an encoded slash', '/documents/fast%2Fone.md', { 'X-API-Key': ADMIN_KEY }],
  [
    'a document with encoded characters',
    '/documents/fast/gr%C3%BC%C3%9Fe.md',
    { 'X-API-Key': ADMIN_KEY },
  ],
  ['a document and a query', '/documents/fast/one.md?x=1', { 'X-API-Key': ADMIN_KEY }],
  [
    'a document not modified',
    '/documents/fast/one.md',
    { 'X-API-Key': ADMIN_KEY, 'If-None-Match': '"1"' },
  ],
  [
    'a document, If-None-Match *',
    '/documents/fast/one.md',
    { 'X-API-Key': ADMIN_KEY, 'If-None-Match': '*' },
  ],
  [
    'a document, weak tag',
    '/documents/fast/one.md',
    { 'X-API-Key': ADMIN_KEY, 'If-None-Match': 'W/"1"' },
  ],
  [
    'a document, stale tag',
    '/documents/fast/one.md',
    { 'X-API-Key': ADMIN_KEY, 'If-None-Match': '"7", "8"' },
  ],
  [
    'a document, unquoted tag',
    '/documents/fast/one.md',
    { 'X-API-Key': ADMIN_KEY, 'If-None-Match': '1' },
  ],
  [
    'a document, tag and no-cache',
    '/documents/fast/one.md',
    { 'X-API-Key': ADMIN_KEY, 'If-None-Match': '"1"', 'Cache-Control': 'no-cache' },
  ],
  [
    'a document named like a route, a letter encoded',
    '/documents/%63hanges',
    { 'X-API-Key': ADMIN_KEY },
  ],
  ['a missing document', '/documents/fast/none.md', { 'X-API-Key': ADMIN_KEY }],
  ['an invalid id', '/documents/fast/nul%00.md', { 'X-API-Key': ADMIN_KEY }],
  ['a document without a key', '/documents/fast/one.md', {}],
  [
    'a document with a key that is not admin',
    '/documents/fast/one.md',
    { 'X-API-Key': READER_KEY },
  ],
];

/**
 * The admin reads' fast path (src/documents/documents-fast-path.ts) answers exactly what
 * the Nest routes it stands in front of answer. Express matches routes without regard to
 * case, so `/Documents/...` is not the fast path's and reaches the Nest route.
 */
describe('admin reads fast path', () => {
  let t: TestApp;
  let routed: jest.SpyInstance;
  beforeAll(async () => {
    t = await startTestApp({
      API_KEYS: `ops:${ADMIN_KEY}:admin;reader:${READER_KEY}:readonly`,
    });
    for (const [id, body] of [
      ['fast/one.md', '# One\n\nThe first.'],
      ['fast/two.md', '# Two'],
      ['fast/three.md', '# Three'],
      ['fast/grüße.md', '# Grüße'],
      ['top.md', '# Top'],
      ['changes', '# A document named like a route'],
    ]) {
      const created = await send(t.baseUrl, {
        method: 'POST',
        path: '/documents',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': ADMIN_KEY },
        body: { document_id: id, body },
      });
      expect(created.status).toBe(201);
    }
    const express = t.app.getHttpAdapter().getInstance() as Express & { handle: () => void };
    routed = jest.spyOn(express, 'handle');
  });
  afterAll(() => t.close());
  beforeEach(() => routed.mockClear());

  it.each(CASES)('%s: the same answer as the Nest route', async (_name, path, headers) => {
    const fast = await send(t.baseUrl, { path, headers });
    expect(routed).not.toHaveBeenCalled();
    const viaExpress = await send(t.baseUrl, {
      path: path.replace('/documents', '/Documents'),
      headers,
    });
    expect(routed).toHaveBeenCalled();
    expect(comparable(fast)).toEqual(comparable(viaExpress));
  });

  it.each([
    ['HEAD', '/documents/fast/one.md'],
    ['GET', '/documents/fast/one.md/history'],
    ['GET', '/documents/fast/one.md/HISTORY'],
    ['GET', '/documents/changes'],
    ['GET', '/documents/Changes?limit=1'],
    ['GET', '/documents/'],
    ['GET', '/documents/fast//one.md'],
    ['GET', '/documents/fast/%E0%A4%A.md'],
  ])('leaves %s %s to Express', async (method, path) => {
    await send(t.baseUrl, { method, path, headers: { 'X-API-Key': ADMIN_KEY } });
    expect(routed).toHaveBeenCalled();
  });

  it('leaves every literal GET route under /documents/ to Express, which routes it ahead of the document', async () => {
    const router = (
      t.app.getHttpAdapter().getInstance() as {
        router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] };
      }
    ).router;
    const literals = router.stack
      .filter(
        (layer) => layer.route?.methods.get && /^\/documents\/[^*:/]+$/.test(layer.route.path),
      )
      .map((layer) => layer.route!.path);
    expect(literals).toContain('/documents/changes');
    for (const path of literals) {
      routed.mockClear();
      const answer = await send(t.baseUrl, { path, headers: { 'X-API-Key': ADMIN_KEY } });
      expect({ path, status: answer.status }).toEqual({ path, status: 200 });
      expect(routed).toHaveBeenCalled();
    }
  });

  // A URL with a fragment (which `new URL` would drop), written on a socket as it is.
  it.each(['/documents/fast/one.md#part', '/documents?prefix=fast/#part'])(
    'leaves GET %s, which Express reads with url.parse, to Express',
    async (path) => {
      const head = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(t.baseUrl).port), '127.0.0.1', () =>
          socket.write(
            Buffer.from(
              `GET ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${ADMIN_KEY}\r\nConnection: close\r\n\r\n`,
              'latin1',
            ),
          ),
        );
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1').split('\r\n')[0]));
        socket.on('error', reject);
      });
      expect(head).toBe('HTTP/1.1 200 OK');
      expect(routed).toHaveBeenCalled();
    },
  );

  it('labels its requests with the route templates and echoes their request ids', async () => {
    const count = async (route: string) => {
      const metrics = await send(t.baseUrl, {
        path: '/metrics',
        headers: { 'X-API-Key': ADMIN_KEY },
      });
      const line = metrics.text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('http_request_duration_seconds_count{') &&
            l.includes('method="GET"') &&
            l.includes(`route="${route}"`) &&
            l.includes('status="200"'),
        );
      return line === undefined ? 0 : Number(line.split(' ').at(-1));
    };
    const [items, lists] = [await count('/documents/*id'), await count('/documents')];
    routed.mockClear(); // /metrics itself goes through Express
    const answer = await send(t.baseUrl, {
      path: '/documents/fast/two.md',
      headers: { 'X-API-Key': ADMIN_KEY, 'X-Request-Id': 'rest-fast-1' },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['x-request-id']).toBe('rest-fast-1');
    await send(t.baseUrl, {
      path: '/documents/fast/three.md',
      headers: { 'X-API-Key': ADMIN_KEY },
    });
    await send(t.baseUrl, { path: '/documents?limit=1', headers: { 'X-API-Key': ADMIN_KEY } });
    expect(routed).not.toHaveBeenCalled();
    // 2 and 1: not counted twice, and under the templates the Nest routes register.
    expect(await count('/documents/*id')).toBe(items + 2);
    expect(await count('/documents')).toBe(lists + 1);
  });
});
