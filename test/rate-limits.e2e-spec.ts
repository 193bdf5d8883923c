import { startTestApp, TestApp } from './support/app';
import { post, rpc, send } from './support/mcp-http';

const OPS = 'ops-key-0123456789abcdef-xyz';
const OTHER = 'other-key-0123456789abcdef-x';
const RETRIER = 'retrier-key-0123456789abcdef';
const API_KEYS = `ops:${OPS}:internal,admin;other:${OTHER}:internal,admin;retrier:${RETRIER}:admin`;

function listCall(id: number) {
  return rpc('tools/call', { name: 'list_documents', arguments: {} }, id);
}

/**
 * Per-principal rate limits (docs/oauth.md), kept in PostgreSQL: two servers on one database
 * draw on one budget, as replicas do.
 */
describe('rate limits per principal', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    const env = { API_KEYS, RATE_LIMIT_TOOL_CALLS: '3/min', RATE_LIMIT_ADMIN_WRITES: '2/min' };
    a = await startTestApp(env);
    b = await startTestApp(env, a.db);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('tools/call: over the budget is HTTP 429 with Retry-After and a JSON-RPC error, shared by replicas', async () => {
    const key = { 'X-API-Key': OPS, Accept: 'application/json, text/event-stream' };
    expect((await post(a.baseUrl, '/mcp', listCall(1), key)).status).toBe(200);
    expect((await post(b.baseUrl, '/mcp', listCall(2), key)).status).toBe(200);
    expect((await post(a.baseUrl, '/mcp', listCall(3), key)).status).toBe(200);
    const refused = await post(b.baseUrl, '/mcp', listCall(4), key);
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.body).toMatchObject({
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32000, data: { code: 'RATE_LIMITED' } },
    });
    expect(refused.body.error.message).toContain('3 tool calls per 60 s');
    // Other methods are not limited, nor is another principal.
    expect((await post(b.baseUrl, '/mcp', rpc('tools/list'), key)).status).toBe(200);
    const other = { 'X-API-Key': OTHER, Accept: 'application/json' };
    expect((await post(b.baseUrl, '/mcp', listCall(5), other)).status).toBe(200);
    const metrics = await send(b.baseUrl, { path: '/metrics' });
    expect(metrics.text).toMatch(/^mcp_rate_limited_total\{profile="internal"\} 1$/m);
    expect(metrics.text).not.toContain(OPS);
  });

  it('a 2026-07-28 request over the budget gets its own id back', async () => {
    const key = { 'X-API-Key': OPS };
    const response = await post(
      a.baseUrl,
      '/mcp',
      {
        ...listCall(77),
        params: {
          name: 'list_documents',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      {
        ...key,
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'tools/call',
        'Mcp-Name': 'list_documents',
      },
    );
    expect(response.status).toBe(429);
    expect(response.body.id).toBe(77);
  });

  it('admin writes: over the budget is 429 RATE_LIMITED; reads are not limited; nothing is written', async () => {
    const key = { 'X-API-Key': OTHER, 'Content-Type': 'application/json' };
    const create = (n: number, app: TestApp) =>
      send(app.baseUrl, {
        method: 'POST',
        path: '/documents',
        headers: key,
        body: { document_id: `limits/doc-${n}.md`, body: `# ${n}` },
      });
    expect((await create(1, a)).status).toBe(201);
    expect((await create(2, b)).status).toBe(201);
    const refused = await create(3, a);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED' });
    expect(refused.body.error.retry_after_seconds).toBeGreaterThanOrEqual(1);
    const read = await send(a.baseUrl, { path: '/documents/limits/doc-3.md', headers: key });
    expect(read.status).toBe(404);
    expect((await send(a.baseUrl, { path: '/documents', headers: key })).status).toBe(200);
  });

  it('admin writes: a retry answered from its idempotency key draws nothing, a keyed write draws one', async () => {
    const write = (n: number, idempotencyKey: string, app: TestApp) =>
      send(app.baseUrl, {
        method: 'POST',
        path: '/documents',
        headers: {
          'X-API-Key': RETRIER,
          'Content-Type': 'application/json',
          'Idempotency-Key': idempotencyKey,
        },
        body: { document_id: `limits/retried-${n}.md`, body: `# ${n}` },
      });
    expect((await write(1, 'first', a)).status).toBe(201);
    // Replays, on both replicas: the stored answer, and the budget (2) untouched.
    for (const app of [a, b, a, b]) {
      const replay = await write(1, 'first', app);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
    }
    expect((await write(2, 'second', b)).status).toBe(201);
    // The budget is spent now: a new keyed write is refused and frees its key, so its retry
    // is refused the same way rather than found in use; a replay is still answered.
    for (const app of [a, b]) {
      const refused = await write(3, 'third', app);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED' });
      expect(refused.body.error.message).toContain('2 writes per 60 s');
    }
    const late = await write(2, 'second', a);
    expect(late.status).toBe(201);
    expect(late.headers['idempotent-replayed']).toBe('true');
    const read = await send(a.baseUrl, {
      path: '/documents/limits/retried-3.md',
      headers: { 'X-API-Key': RETRIER },
    });
    expect(read.status).toBe(404);
  });
});

describe('rate limits by default', () => {
  it('are off on loopback unless configured', async () => {
    const t = await startTestApp({ API_KEYS });
    try {
      expect(t.config.rateLimitToolCalls).toBeUndefined();
      for (let id = 1; id <= 5; id++) {
        const response = await post(t.baseUrl, '/mcp', listCall(id), { 'X-API-Key': OPS });
        expect(response.status).toBe(200);
      }
    } finally {
      await t.close();
    }
  });
});
