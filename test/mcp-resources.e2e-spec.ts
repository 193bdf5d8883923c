import type { Client } from 'pg';
import { startTestApp, TestApp } from './support/app';
import { post, rpc, toolJson, type Json } from './support/mcp-http';
import { modernPost } from './support/mcp-modern';

/** Inserts alive documents straight into the table. */
async function insert(
  db: Client,
  ids: string[],
  body = (id: string) => `# ${id}\n\nText of ${id}.`,
) {
  for (const id of ids) {
    await db.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
       VALUES ($1, NULLIF(regexp_replace($1, '/[^/]*$', ''), $1), $2, $3, 'h')`,
      [id, `Title of ${id}`, body(id)],
    );
  }
}

function byteOrder(values: string[]): string[] {
  return [...values].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

type Era = 'legacy' | 'modern';

/** One request in either era, answered as JSON; returns the JSON-RPC envelope. */
async function call(
  t: TestApp,
  era: Era,
  method: string,
  params: Record<string, unknown> = {},
  path = '/mcp',
) {
  const response =
    era === 'modern'
      ? await modernPost(t.baseUrl, path, method, params)
      : await post(t.baseUrl, path, rpc(method, params), {
          Accept: 'application/json',
          'MCP-Protocol-Version': '2025-11-25',
        });
  expect(response.status).toBe(200);
  return response.body as Json;
}

describe('documents as resources, completions and prompts (docs/mcp.md)', () => {
  let t: TestApp;
  let db: Client;
  const many = Array.from({ length: 250 }, (_, i) => `pages/p${String(i).padStart(3, '0')}.md`);
  const odd = ['odd/a b.md', 'odd/why?.md', 'odd/100%.md', 'odd/Grüße #1.md'];

  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
    await insert(
      db,
      [...many, ...odd, 'kb/guide/setup.md', 'kb/guide/usage.md', 'kb/notes.md', 'big/huge.md'],
      (id) =>
        id === 'big/huge.md' ? `# Huge\n\n${'x'.repeat(70_000)}` : `# ${id}\n\nText of ${id}.`,
    );
    await insert(db, ['kb/gone.md']);
    await db.query(`UPDATE kb_documents SET deleted_at = now() WHERE document_id = 'kb/gone.md'`);
  });
  afterAll(() => t.close());

  describe.each<Era>(['legacy', 'modern'])('%s era', (era) => {
    describe('resources/list', () => {
      it('pages through every alive document once, in byte order, by an opaque cursor', async () => {
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const { result } = await call(
            t,
            era,
            'resources/list',
            cursor === undefined ? {} : { cursor },
          );
          expect(result.resources.length).toBeLessThanOrEqual(50);
          seen.push(...result.resources.map((r: Json) => r.name));
          if (result.nextCursor !== undefined) expect(result.nextCursor).not.toContain('pages/');
          cursor = result.nextCursor;
          pages++;
        } while (cursor !== undefined);
        const { rows } = await db.query<{ document_id: string }>(
          `SELECT document_id FROM kb_documents WHERE deleted_at IS NULL`,
        );
        expect(seen).toEqual(byteOrder(rows.map((row) => row.document_id)));
        expect(seen).not.toContain('kb/gone.md');
        expect(pages).toBe(Math.ceil(rows.length / 50));
      });

      it('describes each document: kb:// URI, markdown, title, size, revision and update time', async () => {
        const { result } = await call(t, era, 'resources/list');
        expect(result.resources[0]).toEqual({
          uri: 'kb://big/huge.md',
          name: 'big/huge.md',
          title: 'Title of big/huge.md',
          mimeType: 'text/markdown',
          size: 70_008,
          annotations: { lastModified: expect.stringMatching(/^\d{4}-/) },
          _meta: { revision: 1 },
        });
        if (era === 'modern')
          expect(result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
        else expect(result.resultType).toBeUndefined();
      });

      it.each(['garbage', 'k1.', 'k1.@@@', ''])(
        'refuses the cursor %p with -32602',
        async (cursor) => {
          const { error } = await call(t, era, 'resources/list', { cursor });
          expect(error).toMatchObject({
            code: -32602,
            message: expect.stringMatching(/cursor is not one this server issued/),
          });
        },
      );
    });

    describe('resources/read', () => {
      it('reads a document as markdown with its revision', async () => {
        const { result } = await call(t, era, 'resources/read', { uri: 'kb://kb/guide/setup.md' });
        expect(result.contents).toEqual([
          {
            uri: 'kb://kb/guide/setup.md',
            mimeType: 'text/markdown',
            text: '# kb/guide/setup.md\n\nText of kb/guide/setup.md.',
            _meta: {
              title: 'Title of kb/guide/setup.md',
              revision: 1,
              updated_at: expect.any(String),
            },
          },
        ]);
      });

      it.each(odd)('round-trips the id %p through its listed URI', async (id) => {
        const listed = (await call(t, era, 'resources/list', {})).result.resources as Json[];
        const all = [...listed];
        let cursor = (await call(t, era, 'resources/list', {})).result.nextCursor;
        while (cursor !== undefined) {
          const page = (await call(t, era, 'resources/list', { cursor })).result;
          all.push(...page.resources);
          cursor = page.nextCursor;
        }
        const resource = all.find((r) => r.name === id);
        expect(resource.uri).toMatch(/^kb:\/\/odd\/[A-Za-z0-9%._~!$&'()*+,;=:@/-]+$/);
        const { result } = await call(t, era, 'resources/read', { uri: resource.uri });
        expect(result.contents[0]).toMatchObject({
          uri: resource.uri,
          text: `# ${id}\n\nText of ${id}.`,
        });
      });

      it('reads a folder as an index of its documents', async () => {
        const { result } = await call(t, era, 'resources/read', { uri: 'kb://kb/guide/' });
        expect(result.contents).toEqual([
          {
            uri: 'kb://kb/guide/',
            mimeType: 'text/markdown',
            text: expect.stringContaining('# kb/guide/'),
            _meta: { document_count: 2, truncated: false },
          },
        ]);
        expect(result.contents[0].text).toContain(
          '[Title of kb/guide/setup.md](kb://kb/guide/setup.md)',
        );
        const big = (await call(t, era, 'resources/read', { uri: 'kb://pages/' })).result
          .contents[0];
        expect(big._meta).toEqual({ document_count: 100, truncated: true });
        expect(big.text).toMatch(/list_documents with prefix "pages\/" and offset 100 continues/);
      });

      it.each(['kb://kb/missing.md', 'kb://kb/gone.md', 'kb://nothing/'])(
        '%s does not exist: the era’s resource-not-found error with the URI',
        async (uri) => {
          const { error } = await call(t, era, 'resources/read', { uri });
          expect(error).toEqual({
            code: era === 'modern' ? -32602 : -32002,
            message: 'Resource not found',
            data: { uri },
          });
        },
      );

      it.each([
        ['https://example.com/a.md', /must be a kb:\/\/ URI/],
        ['kb://a//b.md', /empty segment/],
        ['kb://../x.md', /"\.\." segment/],
        ['kb://a/%ZZ.md', /malformed percent-encoding/],
        ['kb:///', /names no folder/],
      ])('refuses %p with -32602 naming the problem', async (uri, message) => {
        const { error } = await call(t, era, 'resources/read', { uri });
        expect(error).toMatchObject({ code: -32602, data: { uri } });
        expect(error.message).toMatch(/^Invalid params: uri: /);
        expect(error.message).toMatch(message);
      });
    });

    describe('resources/templates/list', () => {
      it('offers the document and folder templates', async () => {
        const { result } = await call(t, era, 'resources/templates/list');
        expect(
          result.resourceTemplates.map((tpl: Json) => [tpl.name, tpl.uriTemplate, tpl.mimeType]),
        ).toEqual([
          ['document', 'kb://{+document_id}', 'text/markdown'],
          ['folder', 'kb://{+folder}/', 'text/markdown'],
        ]);
        expect((await call(t, era, 'resources/templates/list', { cursor: 'x' })).error.code).toBe(
          -32602,
        );
      });
    });

    describe('completion/complete', () => {
      const complete = (ref: Json, name: string, value: string) =>
        call(t, era, 'completion/complete', { ref, argument: { name, value } });
      const documentRef = { type: 'ref/resource', uri: 'kb://{+document_id}' };
      const folderRef = { type: 'ref/resource', uri: 'kb://{+folder}/' };

      it('completes ids and folders by prefix, with the total when it is known', async () => {
        expect((await complete(documentRef, 'document_id', 'kb/gu')).result.completion).toEqual({
          values: ['kb/guide/setup.md', 'kb/guide/usage.md'],
          total: 2,
          hasMore: false,
        });
        expect((await complete(folderRef, 'folder', 'k')).result.completion).toEqual({
          values: ['kb'],
          total: 1,
          hasMore: false,
        });
        expect((await complete(folderRef, 'folder', 'kb/')).result.completion.values).toEqual([
          'kb/guide',
        ]);
      });

      it('stops at 100 values and says more exist', async () => {
        const { completion } = (await complete(documentRef, 'document_id', 'pages/')).result;
        expect(completion.values).toHaveLength(100);
        expect(completion.hasMore).toBe(true);
        expect(completion.total).toBeUndefined();
      });

      it('completes prompt arguments: ids, folders, and nothing for free text', async () => {
        const review = { type: 'ref/prompt', name: 'review_document' };
        expect((await complete(review, 'document_id', 'kb/n')).result.completion.values).toEqual([
          'kb/notes.md',
        ]);
        const summary = { type: 'ref/prompt', name: 'summarize_folder' };
        expect((await complete(summary, 'folder', 'kb/g')).result.completion.values).toEqual([
          'kb/guide',
        ]);
        const answer = { type: 'ref/prompt', name: 'answer_question' };
        expect((await complete(answer, 'question', 'how')).result.completion).toEqual({
          values: [],
          total: 0,
          hasMore: false,
        });
      });

      it.each([
        [
          { type: 'ref/resource', uri: 'kb://{id}' },
          'id',
          /ref\.uri: "kb:\/\/\{id\}" is not a resource template/,
        ],
        [
          { type: 'ref/resource', uri: 'kb://{+document_id}' },
          'folder',
          /has no argument "folder"; its arguments are document_id/,
        ],
        [{ type: 'ref/prompt', name: 'nope' }, 'x', /ref\.name: unknown prompt "nope"/],
        [
          { type: 'ref/prompt', name: 'review_document' },
          'path',
          /prompt review_document has no argument "path"/,
        ],
      ])('refuses %j / %p with -32602 naming the problem', async (ref, name, message) => {
        const { error } = await complete(ref, name, 'a');
        expect(error.code).toBe(-32602);
        expect(error.message).toMatch(message);
      });

      it('refuses a value with control characters', async () => {
        const { error } = await complete(documentRef, 'document_id', 'a\u0001');
        expect(error).toMatchObject({
          code: -32602,
          message: 'Invalid params: value: must not contain control characters',
        });
      });
    });

    describe('prompts', () => {
      it('lists three prompts with their arguments', async () => {
        const { result } = await call(t, era, 'prompts/list');
        expect(result.prompts).toEqual([
          expect.objectContaining({
            name: 'answer_question',
            title: 'Answer from the knowledge base',
            description: expect.any(String),
            arguments: [
              { name: 'question', description: 'The question to answer.', required: true },
              expect.objectContaining({ name: 'folder', required: false }),
            ],
          }),
          expect.objectContaining({
            name: 'summarize_folder',
            arguments: [expect.objectContaining({ name: 'folder', required: true })],
          }),
          expect.objectContaining({
            name: 'review_document',
            arguments: [
              expect.objectContaining({ name: 'document_id' }),
              expect.objectContaining({ name: 'focus' }),
            ],
          }),
        ]);
        if (era === 'modern') expect(result).toMatchObject({ ttlMs: 300000, cacheScope: 'public' });
      });

      it('review_document embeds the document and says how to apply edits on this endpoint', async () => {
        const full = await call(t, era, 'prompts/get', {
          name: 'review_document',
          arguments: { document_id: 'kb/notes.md', focus: 'dates' },
        });
        expect(full.result.messages[0].content.text).toMatch(/Focus on: dates/);
        expect(full.result.messages[0].content.text).toMatch(
          /patch_document and expected_revision 1/,
        );
        expect(full.result.messages[1]).toEqual({
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: 'kb://kb/notes.md',
              mimeType: 'text/markdown',
              text: '# kb/notes.md\n\nText of kb/notes.md.',
            },
          },
        });
        const readonly = await call(
          t,
          era,
          'prompts/get',
          { name: 'review_document', arguments: { document_id: 'kb/notes.md' } },
          '/readonly/mcp',
        );
        expect(readonly.result.messages[0].content.text).toMatch(/read-only: propose the edits/);
      });

      it('summarize_folder embeds the index and whole documents within its budget, links the rest', async () => {
        const { result } = await call(t, era, 'prompts/get', {
          name: 'summarize_folder',
          arguments: { folder: 'kb/guide' },
        });
        expect(result.messages.map((m: Json) => m.content.type)).toEqual([
          'text',
          'resource',
          'resource',
          'resource',
        ]);
        expect(result.messages[1].content.resource.uri).toBe('kb://kb/guide/');
        const big = await call(t, era, 'prompts/get', {
          name: 'summarize_folder',
          arguments: { folder: 'big/' },
        });
        expect(big.result.messages.map((m: Json) => m.content.type)).toEqual([
          'text',
          'resource',
          'resource_link',
        ]);
      });

      it('a prompt links documents as text for revisions before 2025-06-18 (no resource_link there)', async () => {
        const old = await post(
          t.baseUrl,
          '/mcp',
          rpc('prompts/get', { name: 'summarize_folder', arguments: { folder: 'big' } }),
          { Accept: 'application/json', 'MCP-Protocol-Version': '2025-03-26' },
        );
        expect(old.body.result.messages.map((m: Json) => m.content.type)).toEqual([
          'text',
          'resource',
          'text',
        ]);
        expect(old.body.result.messages[2].content.text).toBe(
          'Document big/huge.md (Title of big/huge.md): kb://big/huge.md',
        );
      });

      it('answer_question states the question and the folder to search', async () => {
        const { result } = await call(t, era, 'prompts/get', {
          name: 'answer_question',
          arguments: { question: 'How do I set up?', folder: 'kb/guide' },
        });
        expect(result.description).toBe('Answer "How do I set up?" from the knowledge base');
        expect(result.messages[0].content.text).toContain('Question: How do I set up?');
        expect(result.messages[0].content.text).toContain(
          'search_knowledge with prefix "kb/guide/"',
        );
      });

      it.each([
        [{ name: 'nope' }, /^Invalid params: name: unknown prompt "nope"/],
        [{ name: 'review_document', arguments: {} }, /arguments\.document_id: is required/],
        [
          { name: 'review_document', arguments: { document_id: '   ' } },
          /arguments\.document_id: is required/,
        ],
        [
          { name: 'review_document', arguments: { document_id: 'kb/missing.md' } },
          /arguments\.document_id: no document kb\/missing\.md exists/,
        ],
        [
          { name: 'review_document', arguments: { document_id: 'a//b' } },
          /arguments\.document_id: must not contain an empty segment/,
        ],
        [
          { name: 'review_document', arguments: { document_id: 'kb/notes.md', extra: 'x' } },
          /arguments\.extra: review_document takes no such argument/,
        ],
        [
          { name: 'summarize_folder', arguments: { folder: 'empty/folder' } },
          /arguments\.folder: no document is stored under empty\/folder\//,
        ],
        [
          { name: 'answer_question', arguments: { question: 'q', folder: '../x' } },
          /arguments\.folder: must not contain a "\.\." segment/,
        ],
      ])('refuses %j with -32602 naming the problem', async (params, message) => {
        const { error } = await call(t, era, 'prompts/get', params);
        expect(error.code).toBe(-32602);
        expect(error.message).toMatch(message);
      });
    });
  });

  describe('resource links in tool results', () => {
    const listing = (app: TestApp, protocolVersion: string | undefined) =>
      post(
        app.baseUrl,
        '/mcp',
        rpc('tools/call', { name: 'list_documents', arguments: { prefix: 'kb/guide/' } }),
        {
          Accept: 'application/json',
          ...(protocolVersion ? { 'MCP-Protocol-Version': protocolVersion } : {}),
        },
      );
    const links = [
      {
        type: 'resource_link',
        uri: 'kb://kb/guide/setup.md',
        name: 'kb/guide/setup.md',
        title: 'Title of kb/guide/setup.md',
        mimeType: 'text/markdown',
      },
      {
        type: 'resource_link',
        uri: 'kb://kb/guide/usage.md',
        name: 'kb/guide/usage.md',
        title: 'Title of kb/guide/usage.md',
        mimeType: 'text/markdown',
      },
    ];

    it('2026 era: one per document, after the JSON; structuredContent unchanged', async () => {
      const response = await modernPost(t.baseUrl, '/mcp', 'tools/call', {
        name: 'list_documents',
        arguments: { prefix: 'kb/guide/' },
      });
      expect(response.body.result.content.slice(1)).toEqual(links);
      expect(toolJson(response.body)).toEqual(response.body.result.structuredContent);
    });

    it.each([undefined, '2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])(
      '2025 era (%p): none by default (LangChain agents reject them)',
      async (version) => {
        const { body } = await listing(t, version);
        expect(body.result.content).toHaveLength(1);
      },
    );

    describe('with MCP_TOOL_RESOURCE_LINKS=always', () => {
      let linked: TestApp;
      beforeAll(async () => {
        linked = await startTestApp({ MCP_TOOL_RESOURCE_LINKS: 'always' }, t.db);
      });
      afterAll(() => linked.close());

      it.each([undefined, '2024-11-05', '2025-03-26'])(
        'none for %p (resource_link is defined from 2025-06-18)',
        async (version) => {
          const { body } = await listing(linked, version);
          expect(body.result.content).toHaveLength(1);
        },
      );

      it.each(['2025-06-18', '2025-11-25'])('one per document for %p', async (version) => {
        const { body } = await listing(linked, version);
        expect(body.result.content.slice(1)).toEqual(links);
        expect(toolJson(body)).toEqual(body.result.structuredContent);
      });
    });

    describe('with MCP_TOOL_RESOURCE_LINKS=never', () => {
      it('none in the 2026 era either', async () => {
        const plain = await startTestApp({ MCP_TOOL_RESOURCE_LINKS: 'never' }, t.db);
        try {
          const response = await modernPost(plain.baseUrl, '/mcp', 'tools/call', {
            name: 'list_documents',
            arguments: { prefix: 'kb/guide/' },
          });
          expect(response.body.result.content).toHaveLength(1);
        } finally {
          await plain.close();
        }
      });
    });

    it('batch_read links the documents it found', async () => {
      const response = await modernPost(t.baseUrl, '/mcp', 'tools/call', {
        name: 'batch_read',
        arguments: { document_ids: ['kb/notes.md', 'kb/missing.md'] },
      });
      expect(response.body.result.content.slice(1)).toEqual([
        expect.objectContaining({ type: 'resource_link', uri: 'kb://kb/notes.md' }),
      ]);
    });
  });
});
