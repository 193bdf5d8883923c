import { startTestApp, TestApp } from './support/app';
import { ALL_TOOLS } from './support/mcp-expected';
import { post, rpc, sseEvents, toolJson } from './support/mcp-http';

const init = (protocolVersion: string, id = 1) =>
  rpc(
    'initialize',
    { protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '1.0' } },
    id,
  );

describe('MCP JSON-RPC dispatch', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('initialize', () => {
    it.each(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])(
      'answers the client version %s when supported',
      async (version) => {
        const response = await post(t.baseUrl, '/mcp', init(version));
        expect(response.body.result.protocolVersion).toBe(version);
      },
    );

    it.each(['2024-10-07', '2099-01-01'])('answers the newest version to %s', async (version) => {
      const response = await post(t.baseUrl, '/mcp', init(version));
      expect(response.body.result.protocolVersion).toBe('2025-11-25');
    });

    it('declares tools, names the server and explains the knowledge base per profile', async () => {
      const full = (await post(t.baseUrl, '/mcp', init('2025-06-18', 7))).body;
      expect(full).toMatchObject({
        jsonrpc: '2.0',
        id: 7,
        result: {
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: 'agent-data', version: expect.stringMatching(/^\d+\.\d+\.\d+/) },
        },
      });
      expect(full.result.instructions).toMatch(/search_knowledge/);
      expect(full.result.instructions).toMatch(/patch_document/);
      expect(full.result.instructions).toMatch(/within a few seconds/);
      const readonly = (await post(t.baseUrl, '/mcp-readonly', init('2025-06-18'))).body.result;
      expect(readonly.instructions).toMatch(/read-only/);
      expect(readonly.instructions).not.toMatch(/patch_document/);
    });

    it('refuses malformed initialize params with -32602', async () => {
      const response = await post(t.baseUrl, '/mcp', rpc('initialize', { capabilities: {} }, 3));
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: 3, error: { code: -32602 } });
      expect(response.body.error.message).toMatch(/protocolVersion/);
    });
  });

  it('answers ping with an empty result', async () => {
    expect((await post(t.baseUrl, '/mcp', rpc('ping', undefined, 'p'))).body).toEqual({
      jsonrpc: '2.0',
      id: 'p',
      result: {},
    });
  });

  describe('tools/list', () => {
    it('describes every tool with title, input and output schemas and annotations', async () => {
      const { tools } = (await post(t.baseUrl, '/mcp', rpc('tools/list'))).body.result;
      expect(tools.map((tool: { name: string }) => tool.name)).toEqual(ALL_TOOLS);
      for (const tool of tools) {
        expect(tool.title).toEqual(expect.any(String));
        expect(tool.description.length).toBeGreaterThan(100);
        expect(tool.inputSchema).toMatchObject({ type: 'object', properties: expect.any(Object) });
        expect(tool.outputSchema).toMatchObject({ type: 'object', properties: expect.any(Object) });
        expect(tool.inputSchema.$schema).toBeUndefined();
        expect(tool.annotations).toEqual({
          title: tool.title,
          readOnlyHint: expect.any(Boolean),
          destructiveHint: expect.any(Boolean),
          idempotentHint: expect.any(Boolean),
          openWorldHint: expect.any(Boolean),
        });
      }
      const byName = Object.fromEntries(tools.map((tool: { name: string }) => [tool.name, tool]));
      expect(byName.get_document.inputSchema.properties.path).toBeDefined();
      expect(byName.list_documents.inputSchema.properties.limit).toMatchObject({ maximum: 100 });
      expect(byName.batch_read.inputSchema.properties.document_ids).toMatchObject({ maxItems: 20 });
      expect(byName.search_knowledge.inputSchema.properties.limit).toMatchObject({ maximum: 50 });
      expect(byName.delete_document.annotations.destructiveHint).toBe(true);
      expect(byName.ingest_document.annotations.openWorldHint).toBe(true);
      expect(byName.list_documents.annotations.readOnlyHint).toBe(true);
      expect(byName.upload_document.description).toMatch(/within a few seconds/);
    });

    it.each([
      [
        '/mcp-readonly',
        [
          'search_knowledge',
          'list_documents',
          'get_document',
          'get_document_for_rewrite',
          'batch_read',
          'follow_links',
        ],
      ],
      [
        '/mcp-gpt',
        [
          'search_knowledge',
          'list_documents',
          'get_document',
          'get_document_for_rewrite',
          'batch_read',
          'follow_links',
          'upload_document',
          'update_document',
          'patch_document',
        ],
      ],
    ])('lists exactly the tools of %s', async (path, names) => {
      const { tools } = (await post(t.baseUrl, path, rpc('tools/list'))).body.result;
      expect(tools.map((tool: { name: string }) => tool.name)).toEqual(names);
    });
  });

  describe('tools/call protocol errors', () => {
    it.each(['move_document', 'no_such_tool'])('an unknown tool (%s) → -32602', async (name) => {
      const response = await post(
        t.baseUrl,
        '/mcp',
        rpc('tools/call', { name, arguments: {} }, 11),
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: 11,
        error: { code: -32602, message: `Unknown tool: ${name}` },
      });
    });

    it.each([
      ['/mcp-readonly', 'upload_document'],
      ['/mcp-readonly', 'delete_document'],
      ['/mcp-gpt', 'delete_document'],
      ['/mcp-gpt', 'ingest_document'],
    ])(
      'a tool outside the profile (%s, %s) → -32601 "Tool not allowed on this endpoint"',
      async (path, name) => {
        const response = await post(
          t.baseUrl,
          path,
          rpc('tools/call', { name, arguments: { document_id: 'x.md' } }, 12),
        );
        expect(response.body).toMatchObject({
          id: 12,
          error: { code: -32601, message: 'Tool not allowed on this endpoint' },
        });
        const stillThere = await post(
          t.baseUrl,
          '/mcp',
          rpc('tools/call', { name: 'get_document', arguments: { document_id: 'x.md' } }),
        );
        expect(toolJson(stillThere.body).error.code).toBe('NOT_FOUND');
      },
    );

    it('params without a tool name → -32602', async () => {
      const response = await post(t.baseUrl, '/mcp', rpc('tools/call', { arguments: {} }, 13));
      expect(response.body).toMatchObject({ id: 13, error: { code: -32602 } });
    });
  });

  describe('batches', () => {
    it('answers an array with one answer per request, in order, skipping notifications', async () => {
      const response = await post(t.baseUrl, '/mcp', [
        rpc('ping', undefined, 'a'),
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        rpc(
          'tools/call',
          { name: 'upload_document', arguments: { document_id: 'batch/one.md', content: '# One' } },
          'b',
        ),
        rpc('tools/call', { name: 'get_document', arguments: { path: 'batch/one.md' } }, 'c'),
        rpc('no/such/method', undefined, 'd'),
      ]);
      expect(response.status).toBe(200);
      expect(Array.isArray(response.body)).toBe(true);
      expect(response.body.map((answer: { id: string }) => answer.id)).toEqual([
        'a',
        'b',
        'c',
        'd',
      ]);
      expect(toolJson(response.body[1])).toMatchObject({
        document_id: 'batch/one.md',
        revision: 1,
      });
      expect(toolJson(response.body[2])).toMatchObject({
        document_id: 'batch/one.md',
        body: '# One',
      });
      expect(response.body[3].error.code).toBe(-32601);
    });

    it('answers invalid members with their own -32600', async () => {
      const response = await post(t.baseUrl, '/mcp', [
        rpc('ping', undefined, 1),
        { jsonrpc: '2.0', id: 2 },
        42,
      ]);
      expect(response.status).toBe(200);
      expect(response.body).toEqual([
        { jsonrpc: '2.0', id: 1, result: {} },
        {
          jsonrpc: '2.0',
          id: 2,
          error: { code: -32600, message: expect.stringMatching(/method is required/) },
        },
        { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } },
      ]);
    });

    it('answers 202 to a batch of notifications and client responses only', async () => {
      const response = await post(t.baseUrl, '/mcp', [
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 5, result: {} },
      ]);
      expect(response.status).toBe(202);
      expect(response.text).toBe('');
    });

    it('frames a batch as one SSE event holding the array', async () => {
      const response = await post(
        t.baseUrl,
        '/mcp',
        [rpc('ping', undefined, 1), rpc('ping', undefined, 2)],
        {
          Accept: 'text/event-stream',
        },
      );
      const events = sseEvents(response.text);
      expect(events).toHaveLength(1);
      expect(events[0].data).toEqual([
        { jsonrpc: '2.0', id: 1, result: {} },
        { jsonrpc: '2.0', id: 2, result: {} },
      ]);
    });

    it('refuses initialize inside a batch with 400, -32600', async () => {
      const response = await post(t.baseUrl, '/mcp', [init('2025-03-26'), rpc('ping')]);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: -32600 });
    });
  });

  it('accepts a client response to a server request with 202', async () => {
    const response = await post(t.baseUrl, '/mcp', {
      jsonrpc: '2.0',
      id: 'srv-1',
      result: { ok: true },
    });
    expect(response.status).toBe(202);
  });
});
