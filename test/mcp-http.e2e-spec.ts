import http from 'node:http';
import { startTestApp, TestApp } from './support/app';
import { MCP_ROUTES, post, rpc, send, sseEvents, type Json } from './support/mcp-http';

/** Every error body on an MCP route: a JSON-RPC error envelope served as application/json. */
function expectRpcError(
  response: { status: number; headers: http.IncomingHttpHeaders; body: Json },
  status: number,
  code: number,
) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(response.body).toMatchObject({
    jsonrpc: '2.0',
    error: { code, message: expect.any(String) },
  });
  expect(response.body.result).toBeUndefined();
}

// The other HTTP cases on MCP routes (docs/mcp.md), row by row, on every profile route.
describe.each(MCP_ROUTES)('HTTP cases on $path', ({ path, profile, tools }) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ MAX_REQUEST_BYTES: '4096' });
  });
  afterAll(() => t.close());

  it('GET with an Accept that wants SSE and not JSON → 405, Allow: POST', async () => {
    for (const accept of [
      'text/event-stream',
      'text/*',
      'text/event-stream, application/json;q=0',
    ]) {
      const response = await send(t.baseUrl, { path, headers: { Accept: accept } });
      expectRpcError(response, 405, -32000);
      expect(response.headers.allow).toBe('POST');
    }
  });

  it('GET otherwise → 200 JSON info: server name and version, profile, tool count, protocol versions', async () => {
    const response = await send(t.baseUrl, {
      path,
      headers: { Accept: 'application/json;q=0.5, text/event-stream;q=0.9' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: 'agent-data',
      version: expect.any(String),
      profile,
      tool_count: tools,
      protocol_versions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
    });
    expect(response.body.tools).toHaveLength(tools);
  });

  it.each(['PUT', 'PATCH', 'DELETE'])('%s → 405 with Allow', async (method) => {
    const response = await send(t.baseUrl, {
      method,
      path,
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: rpc('ping'),
    });
    expectRpcError(response, 405, -32000);
    expect(response.headers.allow).toBe('GET, POST');
  });

  it('a body that is not JSON → 400, -32700, framed by the negotiated media type', async () => {
    const json = await post(t.baseUrl, path, '{"jsonrpc":', { Accept: 'application/json' });
    expectRpcError(json, 400, -32700);
    expect(json.body.id).toBeNull();
    const sse = await post(t.baseUrl, path, '{"jsonrpc":', { Accept: 'text/event-stream' });
    expect(sse.status).toBe(400);
    expect(sse.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(sseEvents(sse.text)[0].data).toMatchObject({ error: { code: -32700 } });
    const empty = await send(t.baseUrl, {
      method: 'POST',
      path,
      headers: { 'Content-Type': 'application/json' },
    });
    expectRpcError(empty, 400, -32700);
  });

  it.each([
    ['missing jsonrpc', { id: 1, method: 'ping' }, 1],
    ['missing method', { jsonrpc: '2.0', id: 2 }, 2],
    ['a string', '"hello"', null],
    ['a number', '42', null],
    ['null', 'null', null],
    ['an empty batch', '[]', null],
  ])('not a JSON-RPC request (%s) → 400, -32600', async (_case, body, id) => {
    const response = await post(t.baseUrl, path, typeof body === 'string' ? body : body);
    expectRpcError(response, 400, -32600);
    expect(response.body.id).toBe(id);
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['JSON look-alike', 'application/jsonx'],
  ])('Content-Type %s → 415', async (_case, contentType) => {
    const response = await send(t.baseUrl, {
      method: 'POST',
      path,
      headers: { 'Content-Type': contentType, Accept: 'text/event-stream' },
      body: JSON.stringify(rpc('ping')),
    });
    expectRpcError(response, 415, -32000);
  });

  it('no Content-Type → 415; application/json with parameters is fine', async () => {
    const none = await send(t.baseUrl, { method: 'POST', path, body: JSON.stringify(rpc('ping')) });
    expectRpcError(none, 415, -32000);
    const withCharset = await send(t.baseUrl, {
      method: 'POST',
      path,
      headers: { 'Content-Type': 'Application/JSON; charset=UTF-8' },
      body: JSON.stringify(rpc('ping', undefined, 5)),
    });
    expect(withCharset.body).toEqual({ jsonrpc: '2.0', id: 5, result: {} });
  });

  it('a body over the limit → 413, whether announced by Content-Length or streamed', async () => {
    const big = JSON.stringify(rpc('ping', { padding: 'x'.repeat(5000) }));
    expectRpcError(await post(t.baseUrl, path, big, { Accept: 'text/event-stream' }), 413, -32000);
    const chunked = await new Promise<{
      status: number;
      headers: http.IncomingHttpHeaders;
      body: Json;
    }>((resolve, reject) => {
      const req = http.request(new URL(path, t.baseUrl), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }),
        );
      });
      req.on('error', reject);
      for (let i = 0; i < 5; i++) req.write('x'.repeat(1000));
      req.end();
    });
    expectRpcError(chunked, 413, -32000);
  });

  it('MCP-Protocol-Version present and unsupported → 400 listing the supported versions', async () => {
    for (const version of ['2024-10-07', '1.0', 'garbage']) {
      const response = await post(t.baseUrl, path, rpc('ping'), {
        Accept: 'text/event-stream',
        'MCP-Protocol-Version': version,
      });
      expectRpcError(response, 400, -32000);
      expect(response.body.error.message).toContain(
        '2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05',
      );
    }
  });

  it.each(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])(
    'MCP-Protocol-Version %s is accepted',
    async (version) => {
      const response = await post(t.baseUrl, path, rpc('ping', undefined, 1), {
        'MCP-Protocol-Version': version,
      });
      expect(response.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    },
  );

  it('Origin present and not allowed → 403; loopback origins pass with CORS headers', async () => {
    const evil = await post(t.baseUrl, path, rpc('ping'), {
      Origin: 'https://evil.example',
      Accept: 'text/event-stream',
    });
    expectRpcError(evil, 403, -32000);
    const evilGet = await send(t.baseUrl, { path, headers: { Origin: 'null' } });
    expectRpcError(evilGet, 403, -32000);
    const local = await post(t.baseUrl, path, rpc('ping', undefined, 2), {
      Origin: 'http://localhost:6274',
    });
    expect(local.status).toBe(200);
    expect(local.headers['access-control-allow-origin']).toBe('http://localhost:6274');
    expect(local.headers.vary).toMatch(/Origin/);
  });

  it('answers a CORS preflight from an allowed origin', async () => {
    const response = await send(t.baseUrl, {
      method: 'OPTIONS',
      path,
      headers: {
        Origin: 'http://127.0.0.1:5173',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type, mcp-protocol-version, authorization',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('http://127.0.0.1:5173');
    expect(response.headers['access-control-allow-headers']).toMatch(/MCP-Protocol-Version/);
    expect(response.headers['access-control-allow-headers']).toMatch(/Authorization/);
  });

  it('an unknown method → 200, JSON-RPC -32601', async () => {
    const response = await post(t.baseUrl, path, rpc('sampling/createMessage', {}, 4), {
      Accept: 'application/json',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32601, message: 'Method not found' },
    });
  });
});

describe('MCP paths that do not exist', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it.each([
    '/mcp-nope',
    '/mcp/extra',
    '/mcp-gpt/x',
    '/mcpx',
    '/gpt-mcp/anything/mcp',
    '/gpt-mcp/a/b/c',
  ])('POST %s → 404 JSON-RPC envelope', async (path) => {
    const response = await post(t.baseUrl, path, rpc('ping'), { Accept: 'text/event-stream' });
    expectRpcError(response, 404, -32000);
    expect(response.body.id).toBeNull();
  });

  it('keeps the REST error shape outside the MCP paths', async () => {
    const response = await send(t.baseUrl, { path: '/nope' });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
    expect(response.body.jsonrpc).toBeUndefined();
  });
});

describe('ALLOWED_ORIGINS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ ALLOWED_ORIGINS: 'https://chatgpt.com,https://claude.ai' });
  });
  afterAll(() => t.close());

  it('admits exactly the listed origins (loopback is no longer implied)', async () => {
    const listed = await post(t.baseUrl, '/mcp', rpc('ping'), { Origin: 'https://claude.ai' });
    expect(listed.status).toBe(200);
    expect(listed.headers['access-control-allow-origin']).toBe('https://claude.ai');
    expectRpcError(
      await post(t.baseUrl, '/mcp', rpc('ping'), { Origin: 'http://localhost:3000' }),
      403,
      -32000,
    );
    expect((await post(t.baseUrl, '/mcp', rpc('ping'))).status).toBe(200);
  });
});
