import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, TestApp } from './support/app';
import { MCP_ROUTES } from './support/mcp-http';
import { page, PageServer, startPageServer } from './support/mcp-page-server';
import { ALL_TOOLS } from './support/mcp-expected';
import { callsFor } from './support/mcp-calls';
import { connectSdkClient, resultJson, sentRequests } from './support/mcp-sdk';
import { waitFor } from './support/wait';

describe('the official SDK client on every profile', () => {
  jest.setTimeout(30_000);
  let t: TestApp;
  let pages: PageServer;

  beforeAll(async () => {
    pages = await startPageServer({
      '/guide.html': page(
        'text/html',
        '<html><head><title>Guide</title></head><body><h1>Guide</h1><p>Hello.</p></body></html>',
      ),
    });
    t = await startTestApp({
      // The vector pipeline runs, so search_knowledge answers real hits to validate.
      VECTOR_SYNC_ENABLED: 'true',
      INGEST_ALLOWED_HOSTS: '127.0.0.1',
      INGEST_ALLOW_HTTP: 'true',
      INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
    });
    const db = await t.db.client();
    for (const { profile } of MCP_ROUTES) {
      await db.query(
        `INSERT INTO kb_documents (document_id, parent_id, title, tags, body, content_hash)
         VALUES ($1, $2, 'Seed', '{seed}', '# Seed\n\nThe release checklist lives here.', 'h')`,
        [`sdk/${profile}/seed.md`, `sdk/${profile}`],
      );
    }
  });
  afterAll(async () => {
    await t.close();
    await pages.close();
  });

  describe.each(MCP_ROUTES)('$path ($profile)', ({ path, profile, tools }) => {
    let client: Client;
    beforeAll(async () => {
      client = await connectSdkClient(t.baseUrl, path);
    });
    afterAll(() => client.close());

    it('initializes with the newest protocol version and the server info', () => {
      expect(client.getServerVersion()).toMatchObject({ name: 'agent-data' });
      expect(client.getServerCapabilities()).toMatchObject({ tools: {} });
      expect(client.getInstructions()).toMatch(/knowledge base/);
    });

    it(`lists ${tools} tools`, async () => {
      const { tools: listed } = await client.listTools();
      expect(listed).toHaveLength(tools);
      expect(listed.map((tool) => tool.name)).not.toContain('move_document');
    });

    it('calls every tool of the profile; structured results match the declared output schemas', async () => {
      const { tools: listed } = await client.listTools();
      const calls = callsFor(`sdk/${profile}`, pages.url);
      // Wait until the seed is indexed, so that search_knowledge returns a hit to validate.
      const hits = await waitFor(
        async () => {
          const search = await client.callTool({
            name: 'search_knowledge',
            arguments: calls.search_knowledge,
          });
          const found: Array<{ document_id: string }> = resultJson(search).results;
          return found.length > 0 ? found : undefined;
        },
        'the seed to be searchable',
        { intervalMs: 100 },
      );
      expect(hits.map((hit) => hit.document_id)).toEqual([`sdk/${profile}/seed.md`]);
      for (const tool of listed) {
        // callTool validates structuredContent against the tool's outputSchema.
        const result = await client.callTool({ name: tool.name, arguments: calls[tool.name] });
        expect({ tool: tool.name, isError: result.isError ?? false }).toEqual({
          tool: tool.name,
          isError: false,
        });
        expect(resultJson(result)).toEqual(result.structuredContent);
      }
      const seed = resultJson(
        await client.callTool({ name: 'get_document', arguments: calls.get_document }),
      );
      expect(seed).toMatchObject({ title: 'Seed', tags: ['seed'], truncated: false });
      const batch = resultJson(
        await client.callTool({ name: 'batch_read', arguments: calls.batch_read }),
      );
      expect(batch.items).toEqual([
        expect.objectContaining({
          document_id: `sdk/${profile}/seed.md`,
          found: true,
          body: '# See',
          truncated: true,
        }),
        { document_id: `sdk/${profile}/missing.md`, found: false },
      ]);
    });

    it('answers a tool outside the profile with -32601 and an unknown tool with -32602', async () => {
      const { tools: listed } = await client.listTools();
      const outside = ALL_TOOLS.filter((name) => !listed.some((tool) => tool.name === name));
      expect(outside).toHaveLength(ALL_TOOLS.length - tools);
      for (const name of outside) {
        await expect(client.callTool({ name, arguments: {} })).rejects.toMatchObject({
          code: ErrorCode.MethodNotFound,
          message: expect.stringContaining('Tool not allowed on this endpoint'),
        });
      }
      await expect(
        client.callTool({ name: 'move_document', arguments: {} }),
      ).rejects.toBeInstanceOf(McpError);
      await expect(client.callTool({ name: 'move_document', arguments: {} })).rejects.toMatchObject(
        {
          code: ErrorCode.InvalidParams,
        },
      );
    });

    it('reports tool failures as isError results with a code, a message naming the field, and a hint', async () => {
      const missing = await client.callTool({
        name: 'get_document',
        arguments: { document_id: 'no/such.md' },
      });
      expect(missing.isError).toBe(true);
      expect(missing.structuredContent).toBeUndefined();
      expect(resultJson(missing).error).toMatchObject({
        code: 'NOT_FOUND',
        message: expect.any(String),
        hint: expect.any(String),
      });

      const badLimit = await client.callTool({ name: 'list_documents', arguments: { limit: 101 } });
      expect(resultJson(badLimit).error).toMatchObject({
        code: 'INVALID_ARGUMENT',
        field: 'limit',
      });
      const unknownArg = await client.callTool({
        name: 'list_documents',
        arguments: { folder: 'x/' },
      });
      expect(resultJson(unknownArg).error).toMatchObject({
        code: 'INVALID_ARGUMENT',
        field: 'folder',
      });
      expect(resultJson(unknownArg).error.message).toMatch(/accepts prefix, path, limit, offset/);
      const badId = await client.callTool({
        name: 'get_document',
        arguments: { document_id: '../etc' },
      });
      expect(resultJson(badId).error).toMatchObject({
        code: 'INVALID_ARGUMENT',
        field: 'document_id',
      });
      const noId = await client.callTool({ name: 'get_document', arguments: {} });
      expect(resultJson(noId).error).toMatchObject({
        code: 'INVALID_ARGUMENT',
        field: 'document_id',
      });
    });

    it('pings', async () => {
      await expect(client.ping()).resolves.toEqual({});
    });
  });

  describe('write error paths (gpt profile)', () => {
    let client: Client;
    beforeAll(async () => {
      client = await connectSdkClient(t.baseUrl, '/mcp-gpt');
      await client.callTool({
        name: 'upload_document',
        arguments: { document_id: 'sdk/errors/doc.md', content: 'alpha beta alpha' },
      });
    });
    afterAll(() => client.close());

    it.each([
      ['upload_document', 'ALREADY_EXISTS', { document_id: 'sdk/errors/doc.md', content: 'again' }],
      [
        'update_document',
        'REVISION_CONFLICT',
        { document_id: 'sdk/errors/doc.md', content: 'x', expected_revision: 9 },
      ],
      [
        'patch_document',
        'PATCH_NO_MATCH',
        { document_id: 'sdk/errors/doc.md', old_str: 'gamma', new_str: 'x' },
      ],
      [
        'patch_document',
        'PATCH_AMBIGUOUS',
        { document_id: 'sdk/errors/doc.md', old_str: 'alpha', new_str: 'x' },
      ],
      ['update_document', 'INVALID_ARGUMENT', { document_id: 'sdk/errors/doc.md' }],
      [
        'update_document',
        'INVALID_ARGUMENT',
        { document_id: 'sdk/errors/doc.md', path: 'other.md', content: 'x' },
      ],
      [
        'upload_document',
        'TOO_LARGE',
        { document_id: 'sdk/errors/big.md', content: 'x'.repeat(1024 * 1024 + 1) },
      ],
    ] as const)('%s → %s', async (name, code, args) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError).toBe(true);
      expect(resultJson(result).error.code).toBe(code);
    });

    it('reports the current revision on a conflict and the count on an ambiguous patch', async () => {
      const conflict = resultJson(
        await client.callTool({
          name: 'update_document',
          arguments: { document_id: 'sdk/errors/doc.md', content: 'x', expected_revision: 9 },
        }),
      );
      expect(conflict.error).toMatchObject({ current_revision: 1, expected_revision: 9 });
      const ambiguous = resultJson(
        await client.callTool({
          name: 'patch_document',
          arguments: { document_id: 'sdk/errors/doc.md', old_str: 'alpha', new_str: 'x' },
        }),
      );
      expect(ambiguous.error).toMatchObject({ occurrences: 2 });
    });
  });

  describe('clients that send a different Accept', () => {
    it('works end to end when the client accepts only application/json (MCP Inspector)', async () => {
      const client = await connectSdkClient(t.baseUrl, '/mcp', { accept: 'application/json' });
      try {
        expect((await client.listTools()).tools).toHaveLength(11);
        const result = await client.callTool({
          name: 'list_documents',
          arguments: { prefix: 'sdk/internal/seed' },
        });
        expect(resultJson(result).count).toBe(1);
        const posts = sentRequests(client).filter((r) => r.method === 'POST');
        expect(posts.length).toBeGreaterThanOrEqual(4);
        expect(posts.every((r) => r.accept === 'application/json')).toBe(true);
      } finally {
        await client.close();
      }
    });

    it('works end to end over SSE when the client accepts only text/event-stream', async () => {
      const client = await connectSdkClient(t.baseUrl, '/mcp-gpt-full', {
        accept: 'text/event-stream',
      });
      try {
        expect((await client.listTools()).tools).toHaveLength(11);
        const result = await client.callTool({
          name: 'get_document',
          arguments: { document_id: 'sdk/gpt-full/seed.md' },
        });
        expect(resultJson(result).title).toBe('Seed');
        expect(
          sentRequests(client)
            .filter((r) => r.method === 'POST')
            .every((r) => r.accept === 'text/event-stream'),
        ).toBe(true);
      } finally {
        await client.close();
      }
    });
  });
});
