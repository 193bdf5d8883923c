import { startTestApp, TestApp } from './support/app';
import { callTool, toolJson, type Json } from './support/mcp-http';
import { waitFor } from './support/wait';

describe('MCP document tools', () => {
  let t: TestApp;
  const call = async (name: string, args: Record<string, unknown>, path = '/mcp') => {
    const envelope = await callTool(t.baseUrl, path, name, args);
    const json = toolJson(envelope);
    if (envelope.result.isError) return { ok: false as const, error: json.error };
    expect(envelope.result.structuredContent).toEqual(json);
    return { ok: true as const, ...json };
  };

  beforeAll(async () => {
    t = await startTestApp();
    const db = await t.db.client();
    await db.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
       SELECT format('tools/list/doc-%s.md', lpad(i::text, 3, '0')), 'tools/list', 'Doc ' || i, 'body ' || i, 'h'
         FROM generate_series(1, 120) AS i`,
    );
    await db.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash) VALUES
         ('tools/odd/100%_off.md', 'tools/odd', 'Percent', 'x', 'h'),
         ('tools/odd/100xyoff.md', 'tools/odd', 'Lookalike', 'x', 'h')`,
    );
  });
  afterAll(() => t.close());

  describe('list_documents', () => {
    it('pages through a prefix in byte order with next_offset', async () => {
      const first = await call('list_documents', { prefix: 'tools/list/', limit: 50 });
      expect(first).toMatchObject({
        count: 50,
        returned_count: 50,
        limit: 50,
        offset: 0,
        next_offset: 50,
        truncated: true,
      });
      expect(first.items[0]).toEqual({
        document_id: 'tools/list/doc-001.md',
        parent_id: 'tools/list',
        title: 'Doc 1',
        tags: [],
        revision: 1,
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        vector_status: expect.stringMatching(/^(pending|ready)$/),
      });
      const last = await call('list_documents', { path: 'tools/list/', limit: 50, offset: 100 });
      expect(last).toMatchObject({ count: 20, next_offset: null, truncated: false });
      expect(last.items[19].document_id).toBe('tools/list/doc-120.md');
    });

    it('defaults to 50 and takes % and _ literally', async () => {
      expect((await call('list_documents', { prefix: 'tools/list/' })).limit).toBe(50);
      const odd = await call('list_documents', { prefix: 'tools/odd/100%_' });
      expect(odd.items.map((item: { document_id: string }) => item.document_id)).toEqual([
        'tools/odd/100%_off.md',
      ]);
    });

    it.each([
      [{ limit: 101 }, 'limit'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 1.5 }, 'limit'],
      [{ offset: -1 }, 'offset'],
      [{ prefix: 5 }, 'prefix'],
      [{ prefix: 'a/', path: 'b/' }, 'path'],
      [{ folder: 'a/' }, 'folder'],
    ])('refuses %j naming %s', async (args, field) => {
      const result = await call('list_documents', args);
      expect(result).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT', field } });
    });
  });

  describe('get_document and get_document_for_rewrite', () => {
    // The emoji's first UTF-16 unit is the 20 000th: a naive cut would split it.
    const long = `# Long\n\n${'a'.repeat(19_991)}😀${'c'.repeat(5000)}`;

    beforeAll(async () => {
      await call('upload_document', {
        document_id: 'tools/read/long.md',
        content: long,
        tags: ['t'],
        metadata: { a: 1 },
      });
    });

    it('cuts long bodies at 20 000 characters without splitting a character', async () => {
      const doc = await call('get_document', { document_id: 'tools/read/long.md' });
      expect(doc).toMatchObject({
        document_id: 'tools/read/long.md',
        parent_id: 'tools/read',
        title: 'Long',
        tags: ['t'],
        metadata: { a: 1 },
        revision: 1,
        vector_status: 'pending',
        body_chars: long.length,
        truncated: true,
      });
      expect(long.charCodeAt(19_999)).toBe(0xd83d);
      expect(doc.body.length).toBe(19_999);
      expect(doc.body === long.slice(0, 19_999)).toBe(true);
    });

    it('returns the whole body and the revision for rewriting', async () => {
      const doc = await call('get_document_for_rewrite', { path: 'tools/read/long.md' });
      expect(doc.body === long).toBe(true);
      expect(doc).toMatchObject({
        document_id: 'tools/read/long.md',
        revision: 1,
        content_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
    });

    it('does not cut a short body', async () => {
      await call('upload_document', { document_id: 'tools/read/short.md', content: 'short' });
      expect(await call('get_document', { document_id: 'tools/read/short.md' })).toMatchObject({
        body: 'short',
        truncated: false,
        body_chars: 5,
      });
    });
  });

  describe('batch_read', () => {
    it('answers one item per id, in order, with cut bodies and found: false for missing ones', async () => {
      const result = await call('batch_read', {
        document_ids: [
          'tools/list/doc-002.md',
          'tools/none.md',
          'tools/list/doc-001.md',
          'tools/list/doc-002.md',
        ],
        max_chars: 4,
      });
      expect(result).toMatchObject({ count: 3, found_count: 2 });
      expect(result.items).toEqual([
        expect.objectContaining({
          document_id: 'tools/list/doc-002.md',
          found: true,
          body: 'body',
          truncated: true,
          body_chars: 6,
        }),
        { document_id: 'tools/none.md', found: false },
        expect.objectContaining({
          document_id: 'tools/list/doc-001.md',
          found: true,
          title: 'Doc 1',
        }),
      ]);
    });

    it('cuts at 4000 characters by default and accepts paths', async () => {
      await call('upload_document', {
        document_id: 'tools/batch/big.md',
        content: 'z'.repeat(5000),
      });
      const result = await call('batch_read', { paths: ['tools/batch/big.md'] });
      expect(result.items[0]).toMatchObject({
        body: 'z'.repeat(4000),
        truncated: true,
        body_chars: 5000,
      });
    });

    it.each([
      ['no ids', { document_ids: [] }, 'document_ids'],
      [
        '21 ids',
        { document_ids: Array.from({ length: 21 }, (_, i) => `a/${i}.md`) },
        'document_ids',
      ],
      ['max_chars over 100 000', { document_ids: ['a.md'], max_chars: 100_001 }, 'max_chars'],
      ['a bad id', { document_ids: ['ok.md', '/bad'] }, 'document_ids[1]'],
    ])('refuses %s', async (_case, args, field) => {
      const result = await call('batch_read', args);
      expect(result).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT', field } });
    });
  });

  describe('writes', () => {
    it('uploads, updates, patches and deletes with revisions, and revives a deleted id', async () => {
      const created = await call('upload_document', {
        path: 'tools/w/a.md',
        body: '# Title A\n\none two two',
      });
      expect(created).toMatchObject({
        document_id: 'tools/w/a.md',
        revision: 1,
        title: 'Title A',
        vector_status: 'pending',
      });

      const same = await call('update_document', {
        document_id: 'tools/w/a.md',
        content: '# Title A\n\none two two',
      });
      expect(same).toMatchObject({ revision: 1, changed: false });
      const updated = await call('update_document', {
        document_id: 'tools/w/a.md',
        tags: ['x'],
        expected_revision: 1,
      });
      expect(updated).toMatchObject({ revision: 2, changed: true });

      const patched = await call('patch_document', {
        document_id: 'tools/w/a.md',
        old_str: 'two',
        new_str: '2',
        replace_all: true,
      });
      expect(patched).toMatchObject({ revision: 3, changed: true, replacements: 2 });
      const body = await call('get_document_for_rewrite', { document_id: 'tools/w/a.md' });
      expect(body).toMatchObject({ body: '# Title A\n\none 2 2', tags: ['x'], revision: 3 });

      const deleted = await call('delete_document', { document_id: 'tools/w/a.md' });
      expect(deleted).toMatchObject({
        document_id: 'tools/w/a.md',
        deleted: true,
        revision: 4,
        deleted_at: expect.any(String),
      });
      expect(await call('get_document', { document_id: 'tools/w/a.md' })).toMatchObject({
        ok: false,
        error: { code: 'NOT_FOUND' },
      });
      expect(await call('delete_document', { document_id: 'tools/w/a.md' })).toMatchObject({
        ok: false,
        error: { code: 'NOT_FOUND' },
      });
      const listed = await call('list_documents', { prefix: 'tools/w/' });
      expect(listed.count).toBe(0);

      const revived = await call('upload_document', {
        document_id: 'tools/w/a.md',
        content: 'again',
      });
      expect(revived).toMatchObject({ revision: 5 });
    });

    it('refuses a patch of a stale revision and a missing old_str', async () => {
      await call('upload_document', { document_id: 'tools/w/b.md', content: 'alpha' });
      expect(
        await call('patch_document', {
          document_id: 'tools/w/b.md',
          old_str: 'alpha',
          new_str: 'beta',
          expected_revision: 7,
        }),
      ).toMatchObject({ ok: false, error: { code: 'REVISION_CONFLICT', current_revision: 1 } });
      expect(
        await call('patch_document', { document_id: 'tools/w/b.md', old_str: '', new_str: 'x' }),
      ).toMatchObject({
        ok: false,
        error: { code: 'INVALID_ARGUMENT', field: 'old_str' },
      });
    });

    it('writes nothing when an argument is invalid', async () => {
      const result = await call('upload_document', {
        document_id: 'tools/w/c.md',
        content: 'x',
        tags: 'not-a-list',
      });
      expect(result).toMatchObject({
        ok: false,
        error: { code: 'INVALID_ARGUMENT', field: 'tags' },
      });
      expect(await call('get_document', { document_id: 'tools/w/c.md' })).toMatchObject({
        ok: false,
        error: { code: 'NOT_FOUND' },
      });
    });
  });
});

describe('search_knowledge over MCP', () => {
  // Indexing follows writes through the vector pipeline: allow it time to catch up.
  jest.setTimeout(30_000);
  let t: TestApp;
  const call = async (name: string, args: Record<string, unknown>) => {
    const envelope = await callTool(t.baseUrl, '/mcp', name, args);
    const json = toolJson(envelope);
    return envelope.result.isError
      ? { ok: false as const, error: json.error }
      : { ok: true as const, ...json };
  };
  beforeAll(async () => {
    t = await startTestApp({ VECTOR_SYNC_ENABLED: 'true' });
  });
  afterAll(() => t.close());
  /** Searches until `found` says the index has caught up (indexing follows writes); fails if it never does. */
  function searchUntil(args: Record<string, unknown>, found: (result: Json) => boolean) {
    return waitFor(
      async () => {
        const result = await call('search_knowledge', args);
        return found(result) ? result : undefined;
      },
      `search_knowledge ${JSON.stringify(args)} to find what was written`,
      { intervalMs: 100 },
    );
  }
  const ids = (result: Json): string[] =>
    result.results.map((hit: { document_id: string }) => hit.document_id);

  beforeAll(async () => {
    await call('upload_document', {
      document_id: 'tools/search/kubernetes.md',
      content:
        '# Kubernetes rollout\n\nThe helm chart rollout uses a canary deployment with automatic rollback.',
      tags: ['ops'],
    });
    await call('upload_document', {
      document_id: 'tools/other/cooking.md',
      content: '# Bread\n\nKnead the dough and let it rise overnight before baking.',
      tags: ['food'],
    });
  });

  it('finds documents by their text, with title, score and snippet, best first', async () => {
    // Found by its words: a search that comes while this server first loads its lexical
    // index may see the document on the vector side a moment before the lexical side has it.
    const result = await searchUntil({ query: 'helm canary rollout', limit: 5 }, (r) =>
      r.results.some(
        (hit: { document_id: string; snippet: string }) =>
          hit.document_id === 'tools/search/kubernetes.md' && hit.snippet.includes('**'),
      ),
    );
    expect(result.results[0]).toEqual({
      document_id: 'tools/search/kubernetes.md',
      title: 'Kubernetes rollout',
      score: expect.any(Number),
      heading_path: 'Kubernetes rollout',
      snippet: expect.stringMatching(/\*\*canary\*\*/),
    });
    expect(result.mode).toBe('hybrid');
    expect(result.count).toBe(result.results.length);
    const scores = result.results.map((hit: { score: number }) => hit.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('filters by prefix (or path) and tags', async () => {
    await searchUntil({ query: 'dough baking' }, (r) => ids(r).includes('tools/other/cooking.md'));
    const underSearch = await call('search_knowledge', {
      query: 'dough baking rollout',
      path: 'tools/search/',
    });
    expect(ids(underSearch)).toEqual(['tools/search/kubernetes.md']);
    const tagged = await call('search_knowledge', {
      query: 'dough baking rollout',
      tags: ['food'],
    });
    expect(ids(tagged)).toEqual(['tools/other/cooking.md']);
  });

  it('never returns a deleted document', async () => {
    await call('upload_document', {
      document_id: 'tools/search/gone.md',
      content: 'zebra quagga okapi',
    });
    await searchUntil({ query: 'zebra quagga okapi' }, (r) =>
      ids(r).includes('tools/search/gone.md'),
    );
    await call('delete_document', { document_id: 'tools/search/gone.md' });
    const result = await call('search_knowledge', { query: 'zebra quagga okapi' });
    expect(ids(result)).not.toContain('tools/search/gone.md');
  });

  it.each([
    [{ query: 'x', limit: 51 }, 'limit'],
    [{ query: '' }, 'query'],
    [{ limit: 3 }, 'query'],
    [{ query: 'x', tags: 'ops' }, 'tags'],
  ])('refuses %j naming %s', async (args, field) => {
    expect(await call('search_knowledge', args)).toMatchObject({
      ok: false,
      error: { code: 'INVALID_ARGUMENT', field },
    });
  });
});
