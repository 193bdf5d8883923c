import { Logger } from '@nestjs/common';
import { redactUrl } from '../src/common/logging';
import { startTestApp, TestApp } from './support/app';
import { post, rpc, send, toolJson } from './support/mcp-http';
import { connectSdkClient, resultJson } from './support/mcp-sdk';

const READER = 'reader-key-0123456789abcdef';
const WRITER = 'writer-key-0123456789abcdef';
const OPS = 'ops-key-0123456789abcdef-xyz';
const TOKEN = 'gpt-route-token-abcdefghijklmnopqrstuvwxyz0123';
const API_KEYS = `reader:${READER}:readonly;writer:${WRITER}:gpt,readonly;ops:${OPS}:internal,gpt-full,admin`;

describe('MCP with API_KEYS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ API_KEYS, GPT_ROUTE_TOKEN: TOKEN });
  });
  afterAll(() => t.close());

  describe.each(['/mcp', '/mcp-readonly', '/mcp-gpt', '/mcp-gpt-full'])('%s', (path) => {
    it.each([
      ['no key, JSON Accept', {}],
      ['no key, SSE Accept', { Accept: 'text/event-stream' }],
      ['a wrong X-API-Key', { 'X-API-Key': 'wrong-key-0123456789abcdef' }],
      ['a wrong Bearer token', { Authorization: 'Bearer wrong-key-0123456789abcdef' }],
      ['a key in the wrong scheme', { Authorization: `Basic ${READER}` }],
    ])(
      'POST with %s → 401 JSON-RPC error in plain JSON with WWW-Authenticate',
      async (_case, headers) => {
        const response = await post(
          t.baseUrl,
          path,
          rpc('tools/list'),
          headers as Record<string, string>,
        );
        expect(response.status).toBe(401);
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="agent-data"/);
        expect(response.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
        expect(response.text).not.toContain(READER);
      },
    );

    it('GET without a key → 401 too', async () => {
      const response = await send(t.baseUrl, { path, headers: { Accept: 'text/event-stream' } });
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toBeDefined();
    });
  });

  it('accepts the key from X-API-Key or Authorization: Bearer', async () => {
    const viaHeader = await post(t.baseUrl, '/mcp-readonly', rpc('tools/list'), {
      'X-API-Key': READER,
    });
    expect(viaHeader.body.result.tools).toHaveLength(6);
    const viaBearer = await post(t.baseUrl, '/mcp-readonly', rpc('tools/list'), {
      Authorization: `Bearer ${READER}`,
      Accept: 'text/event-stream',
    });
    expect(viaBearer.status).toBe(200);
    expect(viaBearer.headers['content-type']).toBe('text/event-stream; charset=utf-8');
  });

  it.each([
    ['/mcp', READER],
    ['/mcp-gpt', READER],
    ['/mcp-gpt-full', WRITER],
    ['/mcp', WRITER],
    ['/mcp-readonly', OPS],
  ])('a valid key without the profile of %s → 403', async (path, key) => {
    const response = await post(t.baseUrl, path, rpc('tools/list'), {
      'X-API-Key': key,
      Accept: 'text/event-stream',
    });
    expect(response.status).toBe(403);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body.error.message).toMatch(/does not grant the .* profile/);
  });

  it('lets the official SDK client in with either header', async () => {
    const bearer = await connectSdkClient(t.baseUrl, '/mcp-gpt', {
      headers: { Authorization: `Bearer ${WRITER}` },
    });
    const header = await connectSdkClient(t.baseUrl, '/mcp-gpt-full', {
      headers: { 'X-API-Key': OPS },
    });
    try {
      expect((await bearer.listTools()).tools).toHaveLength(9);
      expect((await header.listTools()).tools).toHaveLength(11);
    } finally {
      await bearer.close();
      await header.close();
    }
  });

  it('refuses the SDK client without a key', async () => {
    await expect(connectSdkClient(t.baseUrl, '/mcp')).rejects.toThrow(/401|Unauthorized/);
  });

  it('records the key name (never the key) as the actor of writes, and logs each call', async () => {
    const logged: unknown[] = [];
    const spy = jest.spyOn(Logger.prototype, 'log').mockImplementation(function (
      this: Logger,
      message: unknown,
    ) {
      logged.push(message);
    });
    try {
      const envelope = await post(
        t.baseUrl,
        '/mcp-gpt',
        rpc('tools/call', {
          name: 'upload_document',
          arguments: { document_id: 'auth/by-writer.md', content: 'hello' },
        }),
        { 'X-API-Key': WRITER },
      );
      expect(toolJson(envelope.body).revision).toBe(1);
      await post(
        t.baseUrl,
        '/mcp-gpt',
        rpc('tools/call', { name: 'get_document', arguments: { document_id: 'auth/missing.md' } }),
        { 'X-API-Key': WRITER },
      );
    } finally {
      spy.mockRestore();
    }
    const db = await t.db.client();
    const audit = await db.query(
      `SELECT actor FROM kb_audit WHERE document_id = 'auth/by-writer.md'`,
    );
    expect(audit.rows).toEqual([{ actor: 'writer' }]);
    const calls = logged.filter((entry) => (entry as { msg?: string }).msg === 'tool call');
    expect(calls).toEqual([
      {
        msg: 'tool call',
        key: 'writer',
        profile: 'gpt',
        tool: 'upload_document',
        document_id: 'auth/by-writer.md',
        outcome: 'ok',
        ms: expect.any(Number),
      },
      expect.objectContaining({
        key: 'writer',
        tool: 'get_document',
        document_id: 'auth/missing.md',
        outcome: 'not_found',
      }),
    ]);
    expect(JSON.stringify(logged)).not.toContain(WRITER);
  });

  describe('the secret GPT route', () => {
    const secret = `/gpt-mcp/${TOKEN}/mcp`;

    it('serves the gpt profile without an API key, over JSON and SSE', async () => {
      const list = await post(t.baseUrl, secret, rpc('tools/list'));
      expect(list.status).toBe(200);
      expect(list.body.result.tools).toHaveLength(9);
      const sse = await post(t.baseUrl, secret, rpc('ping', undefined, 2), {
        Accept: 'text/event-stream',
      });
      expect(sse.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      const info = await send(t.baseUrl, { path: secret });
      expect(info.body).toMatchObject({ profile: 'gpt', tool_count: 9 });
      expect(info.text).not.toContain(TOKEN);
    });

    it('refuses the tools outside the gpt profile', async () => {
      const response = await post(
        t.baseUrl,
        secret,
        rpc('tools/call', {
          name: 'delete_document',
          arguments: { document_id: 'auth/by-writer.md' },
        }),
      );
      expect(response.body.error).toMatchObject({
        code: -32601,
        message: 'Tool not allowed on this endpoint',
      });
    });

    it('names writes "gpt-route" in the audit trail', async () => {
      const envelope = await post(
        t.baseUrl,
        secret,
        rpc('tools/call', {
          name: 'upload_document',
          arguments: { document_id: 'auth/by-route.md', content: 'x' },
        }),
      );
      expect(toolJson(envelope.body).document_id).toBe('auth/by-route.md');
      const db = await t.db.client();
      const audit = await db.query(
        `SELECT actor FROM kb_audit WHERE document_id = 'auth/by-route.md'`,
      );
      expect(audit.rows).toEqual([{ actor: 'gpt-route' }]);
    });

    it.each([
      `/gpt-mcp/${TOKEN.slice(0, -1)}x/mcp`,
      `/gpt-mcp/${TOKEN.slice(0, -1)}/mcp`,
      `/gpt-mcp/${TOKEN}x/mcp`,
      `/gpt-mcp/${READER}/mcp`,
    ])('a wrong token is a 404, exactly like an unknown path (%#)', async (path) => {
      const response = await post(t.baseUrl, path, rpc('tools/list'), { 'X-API-Key': OPS });
      const unknown = await post(t.baseUrl, '/gpt-mcp/x/y/z', rpc('tools/list'));
      expect(response.status).toBe(404);
      expect(response.body).toEqual(unknown.body);
    });

    it('works with the official SDK client', async () => {
      const client = await connectSdkClient(t.baseUrl, secret, { accept: 'text/event-stream' });
      try {
        expect((await client.listTools()).tools).toHaveLength(9);
        const result = await client.callTool({
          name: 'get_document',
          arguments: { path: 'auth/by-route.md' },
        });
        expect(resultJson(result).body).toBe('x');
      } finally {
        await client.close();
      }
    });

    it('never puts the token into metrics or logged URLs', async () => {
      const metrics = await send(t.baseUrl, { path: '/metrics' });
      expect(metrics.text).not.toContain(TOKEN);
      expect(metrics.text).toMatch(
        /http_request_duration_seconds_count\{method="POST",route="\/gpt-mcp\/:token\/mcp",status="200"\} \d+/,
      );
      expect(redactUrl(`/gpt-mcp/${TOKEN}/mcp?x=1`)).toBe('/gpt-mcp/[redacted]/mcp?x=1');
    });
  });

  it('counts tool calls, durations and response framings', async () => {
    const metrics = (await send(t.baseUrl, { path: '/metrics' })).text;
    expect(metrics).toMatch(
      /^mcp_tool_calls_total\{profile="gpt",tool="upload_document",outcome="ok"\} [1-9]/m,
    );
    expect(metrics).toMatch(
      /^mcp_tool_calls_total\{profile="gpt",tool="get_document",outcome="not_found"\} [1-9]/m,
    );
    expect(metrics).toMatch(
      /^mcp_tool_calls_total\{profile="gpt",tool="delete_document",outcome="not_allowed"\} [1-9]/m,
    );
    expect(metrics).toMatch(
      /^mcp_tool_duration_seconds_count\{profile="gpt",tool="upload_document"\} [1-9]/m,
    );
    expect(metrics).toMatch(/^mcp_responses_total\{framing="json"\} [1-9]/m);
    expect(metrics).toMatch(/^mcp_responses_total\{framing="sse"\} [1-9]/m);
    expect(metrics).toMatch(/^mcp_responses_total\{framing="empty"\} [1-9]/m);
    expect(metrics).not.toContain(WRITER);
  });
});
