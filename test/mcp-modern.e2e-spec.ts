import { startTestApp, TestApp } from './support/app';
import { ALL_MCP_ROUTES, post, rpc, send, sseEvents, type RawResponse } from './support/mcp-http';
import { ENVELOPE, MODERN, modernHeaders, modernPost } from './support/mcp-modern';

const SERVER_INFO_META = {
  'io.modelcontextprotocol/serverInfo': {
    name: 'agent-data',
    title: 'Agent Data knowledge base',
    version: expect.stringMatching(/^\d+\.\d+\.\d+/),
  },
};

/** A 2026 refusal: the HTTP status, JSON (never SSE), the code, and the request's id. */
function expectRefusal(response: RawResponse, status: number, code: number, id: unknown) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(response.body).toMatchObject({
    jsonrpc: '2.0',
    id,
    error: { code, message: expect.any(String) },
  });
  expect(response.body.result).toBeUndefined();
}

// The 2026-07-28 rules of docs/mcp.md, rule by rule, on every route.
describe.each(ALL_MCP_ROUTES)('the 2026-07-28 era on $path', ({ path, profile, tools }) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('server/discover', () => {
    it('answers versions, capabilities, instructions, caching hints and the server identity', async () => {
      const response = await modernPost(t.baseUrl, path, 'server/discover', {}, { id: 'd1' });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        jsonrpc: '2.0',
        id: 'd1',
        result: {
          resultType: 'complete',
          supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
          capabilities: {
            tools: { listChanged: false },
            resources: { subscribe: true, listChanged: true },
            prompts: { listChanged: false },
            completions: {},
          },
          instructions: expect.stringContaining('knowledge base'),
          ttlMs: 300000,
          cacheScope: 'public',
          _meta: SERVER_INFO_META,
        },
      });
      if (profile === 'readonly') expect(response.body.result.instructions).toMatch(/read-only/);
    });

    it('is served without clientInfo (optional)', async () => {
      const meta = { 'io.modelcontextprotocol/clientInfo': undefined };
      const response = await modernPost(t.baseUrl, path, 'server/discover', {}, { meta });
      expect(response.status).toBe(200);
      expect(response.body.result.resultType).toBe('complete');
    });
  });

  describe('the per-request envelope', () => {
    it.each([
      ['missing', null],
      ['without protocolVersion', { 'io.modelcontextprotocol/clientCapabilities': {} }],
      ['without clientCapabilities', { 'io.modelcontextprotocol/protocolVersion': MODERN }],
      [
        'with clientCapabilities of the wrong type',
        { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': 'all' },
      ],
    ])('%s → 400, -32602 naming it, with the id', async (_name, meta) => {
      const body = {
        jsonrpc: '2.0',
        id: 101,
        method: 'tools/list',
        params: meta === null ? {} : { _meta: meta },
      };
      const response = await post(t.baseUrl, path, body, modernHeaders('tools/list'));
      expectRefusal(response, 400, -32602, 101);
      expect(response.body.error.message).toMatch(/^Invalid params: params\._meta/);
    });
  });

  describe('versions', () => {
    it('a header that disagrees with _meta → 400, -32020', async () => {
      const response = await modernPost(
        t.baseUrl,
        path,
        'tools/list',
        {},
        {
          id: 302,
          meta: { 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' },
        },
      );
      expectRefusal(response, 400, -32020, 302);
    });

    it('an unsupported version → 400, -32022 with the supported list and the requested one', async () => {
      const response = await modernPost(
        t.baseUrl,
        path,
        'server/discover',
        {},
        {
          id: 301,
          headers: { 'MCP-Protocol-Version': '2099-01-01' },
          meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
        },
      );
      expectRefusal(response, 400, -32022, 301);
      expect(response.body.error.data).toEqual({
        supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
        requested: '2099-01-01',
      });
    });

    it('an unsupported version header without any envelope → 400, -32022 listing the versions', async () => {
      const response = await post(t.baseUrl, path, rpc('tools/list', {}, 9), {
        ...modernHeaders('tools/list'),
        'MCP-Protocol-Version': '2099-01-01',
      });
      expectRefusal(response, 400, -32022, 9);
      expect(response.body.error.data.requested).toBe('2099-01-01');
    });

    it('an envelope without the version header → 400, -32020', async () => {
      const response = await modernPost(
        t.baseUrl,
        path,
        'tools/list',
        {},
        {
          id: 7,
          headers: { 'MCP-Protocol-Version': '' },
        },
      );
      expectRefusal(response, 400, -32020, 7);
    });
  });

  describe('Mcp-Method and Mcp-Name', () => {
    it.each([
      ['missing Mcp-Method', 'tools/list', {}, { 'Mcp-Method': '' }],
      ['another Mcp-Method', 'tools/list', {}, { 'Mcp-Method': 'prompts/list' }],
      ['an upper-cased Mcp-Method', 'tools/list', {}, { 'Mcp-Method': 'TOOLS/LIST' }],
      [
        'missing Mcp-Name',
        'tools/call',
        { name: 'list_documents', arguments: {} },
        { 'Mcp-Name': '' },
      ],
      [
        'another Mcp-Name',
        'tools/call',
        { name: 'list_documents', arguments: {} },
        { 'Mcp-Name': 'get_document' },
      ],
      [
        'an undecodable Mcp-Name',
        'resources/read',
        { uri: 'kb://a.md' },
        { 'Mcp-Name': '=?base64?a2I6Ly9hLm1?=' },
      ],
    ])('%s → 400, -32020', async (_name, method, params, headers) => {
      const response = await modernPost(t.baseUrl, path, method, params, { id: 'h', headers });
      expectRefusal(response, 400, -32020, 'h');
    });

    it('accepts whitespace around values, header names in any case, and base64 names', async () => {
      const spaced = await modernPost(
        t.baseUrl,
        path,
        'tools/call',
        { name: 'list_documents', arguments: {} },
        {
          headers: { 'Mcp-Name': '  list_documents\t' },
        },
      );
      expect(spaced.status).toBe(200);
      expect(spaced.body.result.isError).toBeUndefined();
      const lower = await post(t.baseUrl, path, rpc('tools/list', { _meta: ENVELOPE }), {
        accept: 'application/json',
        'mcp-protocol-version': MODERN,
        'MCP-METHOD': 'tools/list',
      });
      expect(lower.status).toBe(200);
      const uri = 'kb://wiki/Grüße.md';
      const encoded = await modernPost(
        t.baseUrl,
        path,
        'resources/read',
        { uri },
        {
          headers: { 'Mcp-Name': `=?base64?${Buffer.from(uri).toString('base64')}?=` },
        },
      );
      // Read as asked: the document does not exist, which is the resource-not-found error.
      expect(encoded.body.error).toEqual({
        code: -32602,
        message: 'Resource not found',
        data: { uri },
      });
    });
  });

  describe('methods', () => {
    it.each(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'unknown/method'])(
      '%s → 404, -32601, with the id',
      async (method) => {
        const response = await modernPost(t.baseUrl, path, method, {}, { id: 500 });
        expectRefusal(response, 404, -32601, 500);
        expect(response.body.error.message).toBe('Method not found');
      },
    );

    it('tools/list: the profile tools, resultType, caching hints and the server identity', async () => {
      const response = await modernPost(t.baseUrl, path, 'tools/list');
      expect(response.body.result).toEqual({
        resultType: 'complete',
        tools: expect.any(Array),
        ttlMs: 300000,
        cacheScope: 'public',
        _meta: SERVER_INFO_META,
      });
      expect(response.body.result.tools).toHaveLength(tools);
    });

    it('tools/call: a result with resultType and the server identity; failures stay results', async () => {
      const ok = await modernPost(t.baseUrl, path, 'tools/call', {
        name: 'list_documents',
        arguments: {},
      });
      expect(ok.body.result).toMatchObject({
        resultType: 'complete',
        content: [{ type: 'text' }],
        structuredContent: { items: [], count: 0 },
        _meta: SERVER_INFO_META,
      });
      expect(ok.body.result.ttlMs).toBeUndefined();
      const failed = await modernPost(t.baseUrl, path, 'tools/call', {
        name: 'get_document',
        arguments: { document_id: 'no/such.md' },
      });
      expect(failed.status).toBe(200);
      expect(failed.body.result).toMatchObject({ resultType: 'complete', isError: true });
    });

    it('an in-band error keeps HTTP 200 and the id', async () => {
      const response = await modernPost(
        t.baseUrl,
        path,
        'tools/call',
        { name: 'move_document', arguments: {} },
        { id: 'x' },
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: 'x', error: { code: -32602 } });
    });

    it('nothing acceptable in Accept → 406 with the id', async () => {
      const response = await modernPost(
        t.baseUrl,
        path,
        'tools/list',
        {},
        {
          id: 406,
          headers: { Accept: 'application/xml' },
        },
      );
      expectRefusal(response, 406, -32000, 406);
    });

    it('frames the answer as one SSE event when the client asks for SSE only', async () => {
      const response = await modernPost(
        t.baseUrl,
        path,
        'server/discover',
        {},
        {
          id: 's',
          headers: { Accept: 'text/event-stream' },
        },
      );
      expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(sseEvents(response.text)).toEqual([
        {
          event: 'message',
          data: expect.objectContaining({
            id: 's',
            result: expect.objectContaining({ resultType: 'complete' }),
          }),
        },
      ]);
    });
  });

  describe('HTTP', () => {
    it.each(['GET', 'DELETE'])('%s with the 2026 header → 405, Allow: POST', async (method) => {
      const response = await send(t.baseUrl, {
        method,
        path,
        headers: { Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': MODERN },
      });
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('POST');
      expect(response.body).toMatchObject({ error: { code: -32000 } });
    });

    it('lets browsers send the mirrored headers (CORS preflight)', async () => {
      const response = await send(t.baseUrl, {
        method: 'OPTIONS',
        path,
        headers: {
          Origin: 'http://localhost:6274',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'mcp-protocol-version, mcp-method, mcp-name',
        },
      });
      expect(response.status).toBe(204);
      expect(response.headers['access-control-allow-headers']).toMatch(/Mcp-Method, Mcp-Name/);
    });

    it('ignores Mcp-Session-Id and Last-Event-ID, and mints no session', async () => {
      const response = await modernPost(
        t.baseUrl,
        path,
        'tools/list',
        {},
        {
          headers: { 'Mcp-Session-Id': 'abc', 'Last-Event-ID': '42' },
        },
      );
      expect(response.status).toBe(200);
      expect(response.headers['mcp-session-id']).toBeUndefined();
    });

    it('accepts a notification with 202 and no body', async () => {
      const response = await post(
        t.baseUrl,
        path,
        {
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 1, _meta: ENVELOPE },
        },
        modernHeaders('notifications/cancelled'),
      );
      expect(response.status).toBe(202);
      expect(response.text).toBe('');
    });

    it('refuses a batch and a client response with -32600', async () => {
      const batch = await post(
        t.baseUrl,
        path,
        [rpc('tools/list', { _meta: ENVELOPE })],
        modernHeaders('tools/list'),
      );
      expectRefusal(batch, 400, -32600, null);
      const response = await post(
        t.baseUrl,
        path,
        { jsonrpc: '2.0', id: 3, result: {} },
        modernHeaders('x'),
      );
      expectRefusal(response, 400, -32600, null);
    });

    it('answers malformed JSON with -32700 as in the 2025 era', async () => {
      const response = await post(
        t.baseUrl,
        path,
        '{"jsonrpc": "2.0",',
        modernHeaders('tools/list'),
      );
      expectRefusal(response, 400, -32700, null);
    });
  });

  describe('the 2025 era beside it', () => {
    it('still answers initialize without the 2026 header with a handshake revision', async () => {
      const response = await post(
        t.baseUrl,
        path,
        rpc(
          'initialize',
          {
            protocolVersion: '2026-07-28',
            capabilities: {},
            clientInfo: { name: 'x', version: '1' },
          },
          1,
        ),
      );
      expect(response.status).toBe(200);
      expect(response.body.result.protocolVersion).toBe('2025-11-25');
      expect(response.body.result.resultType).toBeUndefined();
    });

    it('answers server/discover without the 2026 header as an unknown method (200, -32601)', async () => {
      const response = await post(t.baseUrl, path, rpc('server/discover', {}, 2), {
        Accept: 'application/json',
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: 2, error: { code: -32601 } });
    });
  });
});
