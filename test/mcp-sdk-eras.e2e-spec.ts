import { startTestApp, TestApp } from './support/app';
import { callsFor } from './support/mcp-calls';
import { ALL_MCP_ROUTES, type Json } from './support/mcp-http';
import { page, PageServer, startPageServer } from './support/mcp-page-server';
import {
  type AnySdkClient,
  connectAnyClient,
  resultJson,
  type SdkClientKind,
} from './support/mcp-sdk';
import { waitFor } from './support/wait';

const KINDS: Array<{ kind: SdkClientKind; version: string }> = [
  { kind: 'v1', version: '2025-11-25' },
  { kind: 'v2-auto', version: '2026-07-28' },
  { kind: 'v2-pin', version: '2026-07-28' },
];

/**
 * The official SDK clients as a new user meets them (docs/mcp.md): v1 with the 2025
 * handshake, v2 probing with server/discover (`auto`) and v2 pinned to 2026-07-28, on every
 * route. Each connects, lists and calls every tool of its profile (the clients validate
 * structured results against the output schemas), lists and reads resources, lists the
 * templates, completes an id and a folder, and renders every prompt.
 */
describe('official SDK clients in both protocol eras, on every route', () => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let pages: PageServer;
  const folder = (kind: string, path: string) => `eras/${kind}${path.replace(/\//g, '_')}`;

  beforeAll(async () => {
    pages = await startPageServer({
      '/guide.html': page(
        'text/html',
        '<html><head><title>Guide</title></head><body><h1>Guide</h1><p>Hello.</p></body></html>',
      ),
    });
    t = await startTestApp({
      VECTOR_SYNC_ENABLED: 'true',
      INGEST_ALLOWED_HOSTS: '127.0.0.1',
      INGEST_ALLOW_HTTP: 'true',
      INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
    });
    const db = await t.db.client();
    for (const { kind } of KINDS) {
      for (const { path } of ALL_MCP_ROUTES) {
        const prefix = folder(kind, path);
        await db.query(
          `INSERT INTO kb_documents (document_id, parent_id, title, tags, body, content_hash)
           VALUES ($1, $2, 'Seed', '{seed}', '# Seed\n\nThe release checklist lives here.', 'h')`,
          [`${prefix}/seed.md`, prefix],
        );
      }
    }
  });
  afterAll(async () => {
    await t.close();
    await pages.close();
  });

  describe.each(KINDS)('SDK $kind', ({ kind, version }) => {
    describe.each(ALL_MCP_ROUTES)('$path ($profile)', ({ path, tools }) => {
      let client: AnySdkClient;
      let protocolVersion: string | undefined;
      const prefix = folder(kind, path);
      beforeAll(async () => {
        ({ client, protocolVersion } = await connectAnyClient(kind, t.baseUrl, path));
      });
      afterAll(() => client.close());

      it(`speaks ${version} and sees tools, resources, prompts and completions`, () => {
        expect(protocolVersion).toBe(version);
        expect(client.getServerCapabilities()).toMatchObject({
          tools: {},
          resources: {},
          prompts: {},
          completions: {},
        });
      });

      it(`lists and calls the ${tools} tools of the profile`, async () => {
        const { tools: listed } = await client.listTools();
        expect(listed).toHaveLength(tools);
        const calls = callsFor(prefix, pages.url);
        const hits = await waitFor(
          async () => {
            const found: unknown[] = resultJson(
              await client.callTool({
                name: 'search_knowledge',
                arguments: calls.search_knowledge,
              }),
            ).results;
            return found.length > 0 ? found : undefined;
          },
          'the seed to be searchable',
          { intervalMs: 100 },
        );
        expect(hits).toHaveLength(1);
        for (const tool of listed) {
          const result = await client.callTool({ name: tool.name, arguments: calls[tool.name] });
          expect({ tool: tool.name, isError: result.isError ?? false }).toEqual({
            tool: tool.name,
            isError: false,
          });
          expect(resultJson(result)).toEqual(result.structuredContent);
        }
      });

      it(
        kind === 'v1'
          ? 'gets listings as one JSON text item (no resource links in the 2025 era by default)'
          : 'gets resource links in listings, after the JSON text item',
        async () => {
          const result = await client.callTool({
            name: 'list_documents',
            arguments: { prefix: `${prefix}/seed` },
          });
          const link = {
            type: 'resource_link',
            uri: `kb://${prefix}/seed.md`,
            name: `${prefix}/seed.md`,
            title: 'Seed',
            mimeType: 'text/markdown',
          };
          expect(result.content).toEqual([
            { type: 'text', text: expect.any(String) },
            ...(kind === 'v1' ? [] : [link]),
          ]);
        },
      );

      it('lists, reads and completes resources', async () => {
        const uri = `kb://${prefix}/seed.md`;
        const all: Array<{ uri: string }> = [];
        let cursor: string | undefined;
        do {
          const listed = await client.listResources(cursor === undefined ? {} : { cursor });
          all.push(...listed.resources);
          cursor = listed.nextCursor;
        } while (cursor !== undefined);
        expect(all.map((resource) => resource.uri)).toContain(uri);
        const read = await client.readResource({ uri });
        expect(read.contents).toEqual([
          expect.objectContaining({
            uri,
            mimeType: 'text/markdown',
            text: expect.stringContaining('# Seed'),
          }),
        ]);
        const folderRead = await client.readResource({ uri: `kb://${prefix}/` });
        expect(folderRead.contents[0].text).toContain(`(${uri})`);
        const templates = await client.listResourceTemplates();
        expect(
          templates.resourceTemplates.map((tpl: { uriTemplate: string }) => tpl.uriTemplate),
        ).toEqual(['kb://{+document_id}', 'kb://{+folder}/']);
        const ids = await client.complete({
          ref: { type: 'ref/resource', uri: 'kb://{+document_id}' },
          argument: { name: 'document_id', value: `${prefix}/se` },
        });
        expect(ids.completion).toEqual({ values: [`${prefix}/seed.md`], total: 1, hasMore: false });
        const folders = await client.complete({
          ref: { type: 'ref/resource', uri: 'kb://{+folder}/' },
          argument: { name: 'folder', value: prefix.slice(0, -3) },
        });
        expect(folders.completion.values).toContain(prefix);
      });

      it('lists and renders the prompts', async () => {
        const { prompts } = await client.listPrompts();
        expect(prompts.map((prompt: { name: string }) => prompt.name)).toEqual([
          'answer_question',
          'summarize_folder',
          'review_document',
        ]);
        const review = await client.getPrompt({
          name: 'review_document',
          arguments: { document_id: `${prefix}/seed.md` },
        });
        expect(review.messages[1].content).toEqual({
          type: 'resource',
          resource: {
            uri: `kb://${prefix}/seed.md`,
            mimeType: 'text/markdown',
            text: '# Seed\n\nThe release checklist lives here.',
          },
        });
        const summary = await client.getPrompt({
          name: 'summarize_folder',
          arguments: { folder: prefix },
        });
        expect(summary.messages.length).toBeGreaterThanOrEqual(3);
        const answer = await client.getPrompt({
          name: 'answer_question',
          arguments: { question: 'Where is the release checklist?', folder: prefix },
        });
        expect(answer.messages[0].content.text).toContain('Where is the release checklist?');
        expect(answer.messages.slice(1).map((message: Json) => message.content)).toContainEqual(
          expect.objectContaining({ type: 'resource_link', uri: `kb://${prefix}/seed.md` }),
        );
        const completed = await client.complete({
          ref: { type: 'ref/prompt', name: 'review_document' },
          argument: { name: 'document_id', value: `${prefix}/` },
        });
        // Earlier tool calls wrote beside the seed: every value is an id of the folder.
        expect(completed.completion.values).toContain(`${prefix}/seed.md`);
        expect(completed.completion.values.every((id: string) => id.startsWith(`${prefix}/`))).toBe(
          true,
        );
      });
    });
  });
});
