import type { Client } from 'pg';
import request from 'supertest';
import { startTestApp, TestApp } from './support/app';
import { callTool, post, rpc, type Json } from './support/mcp-http';
import { waitFor } from './support/wait';
import { namedKeys } from './support/keys';

const KEYS = {
  bob: 'bob-key-0123456789abcdef0123',
  alice: 'alice-key-0123456789abcdef012',
  both: 'both-key-0123456789abcdef0123',
  nobody: 'nobody-key-0123456789abcdef01',
};
const { apiKeys: API_KEYS, as } = namedKeys(KEYS);

/** Bob reads and writes team-b/; Alice reads team-a/ and team-b/, writes team-a/. */
const POLICY = {
  rules: [
    { who: ['key:bob'], read: ['team-b/'], write: ['team-b/'] },
    { who: ['key:alice'], read: ['team-b/'], write: ['team-a/'] },
    { who: ['key:both'], read: '*', write: ['*'] },
  ],
};

/** A word only the team-a documents hold. */
const SECRET_WORD = 'zanzibarquux';
const SECRET_TITLE = 'Quarterly secret plans';
/** Unreadable documents holding the word the search looks for, and readable ones. */
const HIDDEN_MATCHES = 1000;
const OPEN_MATCHES = 12;

/**
 * Folder-level access control (docs/access-control.md) on every surface that reads a
 * document: a principal reading team-b/ only never sees anything of team-a/ — its ids,
 * titles, words, counts — and an unreadable document answers exactly as an absent one.
 */
describe('access control', () => {
  let t: TestApp;
  let sql: Client;

  const tool = async (who: keyof typeof KEYS, name: string, args: Record<string, unknown>) =>
    callTool(t.baseUrl, '/mcp', name, args, as(who));
  const mcp = async (who: keyof typeof KEYS, method: string, params: Record<string, unknown>) =>
    (await post(t.baseUrl, '/mcp', rpc(method, params), { Accept: 'application/json', ...as(who) }))
      .body as Json;
  /** The answer with the id it names replaced, to compare an unreadable and an absent one. */
  const anonymised = (answer: unknown, id: string) =>
    JSON.parse(
      JSON.stringify(answer)
        .split(id)
        .join('<id>')
        .replace(/"id":\d+/g, '"id":0'),
    );

  /** Every row of the change feed `who` may see under `query`, through pages of `limit`. */
  const changes = async (who: keyof typeof KEYS, query: Record<string, string>, limit = 500) => {
    const rows: Json[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: Json } = await request(t.baseUrl)
        .get('/documents/changes')
        .query({ ...query, limit, ...(cursor === null ? {} : { cursor }) })
        .set(as(who))
        .expect(200);
      expect(page.body.changes.length).toBe(
        page.body.next_cursor === null ? page.body.changes.length : limit,
      );
      rows.push(...page.body.changes);
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    return rows;
  };

  beforeAll(async () => {
    t = await startTestApp({
      API_KEYS,
      ACCESS_POLICY: JSON.stringify(POLICY),
      VECTOR_SYNC_ENABLED: 'true',
    });
    sql = await t.db.client();
    const write = (document: Record<string, unknown>) =>
      request(t.baseUrl).post('/documents').set(as('both')).send(document).expect(201);
    await write({
      document_id: 'team-a/secret.md',
      title: SECRET_TITLE,
      body: `# Plans\n\nThe ${SECRET_WORD} launch is planned for spring. Needle haystack.`,
    });
    await write({
      document_id: 'team-b/open.md',
      title: 'Team B notes',
      body: '# Notes\n\nTeam B keeps its runbooks here. Needle haystack.',
    });
    await write({ document_id: 'team-ab/lookalike.md', body: 'Not in team-a/: a lookalike.' });
    for (let i = 0; i < HIDDEN_MATCHES; i += 25) {
      await Promise.all(
        Array.from({ length: 25 }, (_, k) =>
          write({ document_id: `team-a/many/m${i + k}.md`, body: `needle needle needle ${i + k}` }),
        ),
      );
    }
    for (let i = 0; i < OPEN_MATCHES; i++) {
      await write({ document_id: `team-b/many/m${i}.md`, body: `needle and hay ${i}` });
    }
    await waitFor(
      async () => {
        const { rows } = await sql.query(
          `SELECT count(*)::int AS n FROM kb_documents WHERE vector_status <> 'ready'`,
        );
        return rows[0].n === 0;
      },
      'every document to be indexed',
      60_000,
    );
    await waitFor(
      async () =>
        Boolean(
          (await request(t.baseUrl).get('/admin/vectors/status').set(as('both'))).body.lexical
            ?.semantic_model,
        ),
      'the semantic model to be learnt',
      90_000,
    );
  }, 180_000);
  afterAll(() => t.close());

  describe('reads by a principal with team-b/ only', () => {
    it('list_documents and GET /documents list and count only team-b/', async () => {
      for (const prefix of [undefined, 'team', 'team-a/', 'team-b/']) {
        const listed = JSON.stringify(await tool('bob', 'list_documents', { prefix, limit: 100 }));
        expect(listed).not.toContain('team-a/');
        expect(listed).not.toContain(SECRET_TITLE);
        const rest = await request(t.baseUrl)
          .get('/documents')
          .query(prefix === undefined ? { limit: 100 } : { prefix, limit: 100 })
          .set(as('bob'))
          .expect(200);
        expect(rest.body.items.every((d: Json) => d.document_id.startsWith('team-b/'))).toBe(true);
      }
      const all = await request(t.baseUrl).get('/documents').query({ limit: 100 }).set(as('bob'));
      expect(all.body.count).toBe(1 + OPEN_MATCHES);
      const secret = await tool('bob', 'list_documents', { prefix: 'team-a/' });
      expect(JSON.parse(secret.result.content[0].text)).toMatchObject({ count: 0, items: [] });
    });

    it('get_document, get_document_for_rewrite and REST answer an unreadable document as an absent one', async () => {
      for (const name of ['get_document', 'get_document_for_rewrite']) {
        const hidden = await tool('bob', name, { document_id: 'team-a/secret.md' });
        const absent = await tool('bob', name, { document_id: 'team-a/absent.md' });
        expect(hidden.result.isError).toBe(true);
        expect(anonymised(hidden, 'team-a/secret.md')).toEqual(
          anonymised(absent, 'team-a/absent.md'),
        );
        expect(JSON.stringify(hidden)).not.toContain(SECRET_WORD);
      }
      for (const path of ['', '/history', '/history?revision=1']) {
        const hidden = await request(t.baseUrl)
          .get(`/documents/team-a/secret.md${path}`)
          .set(as('bob'));
        const absent = await request(t.baseUrl)
          .get(`/documents/team-a/absent.md${path}`)
          .set(as('bob'));
        expect(hidden.status).toBe(404);
        expect(hidden.status).toBe(absent.status);
        expect(anonymised(hidden.body, 'team-a/secret.md')).toEqual(
          anonymised(absent.body, 'team-a/absent.md'),
        );
      }
      // Whole segments: team-ab/ is not team-a/, and not team-b/ either.
      await request(t.baseUrl).get('/documents/team-ab/lookalike.md').set(as('bob')).expect(404);
      await request(t.baseUrl).get('/documents/team-b/open.md').set(as('bob')).expect(200);
    });

    it('batch_read returns the readable documents and reports the others as not found', async () => {
      const result = JSON.stringify(
        await tool('bob', 'batch_read', {
          document_ids: ['team-a/secret.md', 'team-b/open.md', 'team-a/absent.md'],
        }),
      );
      expect(result).toContain('team-b/open.md');
      expect(result).not.toContain(SECRET_WORD);
      expect(result).not.toContain(SECRET_TITLE);
    });

    it('search_knowledge and /search never return the word, in any mode, and fill `limit` from what is readable', async () => {
      for (const mode of ['hybrid', 'lexical', 'vector']) {
        const secret = JSON.stringify(
          await tool('bob', 'search_knowledge', { query: SECRET_WORD, mode }),
        );
        expect(secret).not.toContain('team-a/');
        expect(secret).not.toContain(SECRET_WORD);
        const rest = await request(t.baseUrl)
          .get('/search')
          .query({ query: `${SECRET_WORD} plans`, mode })
          .set(as('bob'))
          .expect(200);
        expect(JSON.stringify(rest.body)).not.toContain('team-a/');
        // Most documents holding "needle" are in team-a/: ten readable ones still come back.
        const needle = await request(t.baseUrl)
          .get('/search')
          .query({ query: 'needle', mode, limit: 10 })
          .set(as('bob'))
          .expect(200);
        if (mode !== 'vector') expect(needle.body.results).toHaveLength(10);
        expect(needle.body.results.every((r: Json) => r.document_id.startsWith('team-b/'))).toBe(
          true,
        );
      }
      const inFolder = await request(t.baseUrl)
        .get('/search')
        .query({ query: 'needle', prefix: 'team-a', mode: 'lexical' })
        .set(as('bob'))
        .expect(200);
      expect(inFolder.body.results).toEqual([]);
    });

    it('resources/list, resources/read and folder indexes show only team-b/', async () => {
      let cursor: string | undefined;
      const seen: string[] = [];
      do {
        const page = await mcp('bob', 'resources/list', cursor === undefined ? {} : { cursor });
        seen.push(...page.result.resources.map((r: Json) => r.name));
        cursor = page.result.nextCursor;
      } while (cursor !== undefined);
      expect(seen).toHaveLength(1 + OPEN_MATCHES);
      expect(seen.every((id) => id.startsWith('team-b/'))).toBe(true);

      const hidden = await mcp('bob', 'resources/read', { uri: 'kb://team-a/secret.md' });
      const absent = await mcp('bob', 'resources/read', { uri: 'kb://team-a/absent.md' });
      expect(hidden.error).toBeDefined();
      expect(anonymised(hidden, 'team-a/secret.md')).toEqual(
        anonymised(absent, 'team-a/absent.md'),
      );
      const folder = await mcp('bob', 'resources/read', { uri: 'kb://team-a/' });
      const noFolder = await mcp('bob', 'resources/read', { uri: 'kb://team-z/' });
      expect(anonymised(folder, 'team-a/')).toEqual(anonymised(noFolder, 'team-z/'));
    });

    it('completion/complete offers only readable ids and folders', async () => {
      const complete = async (uri: string, name: string, value: string) =>
        (
          await mcp('bob', 'completion/complete', {
            ref: { type: 'ref/resource', uri },
            argument: { name, value },
          })
        ).result.completion.values as string[];
      const ids = await complete('kb://{+document_id}', 'document_id', 'team');
      expect(ids.length).toBeGreaterThan(0);
      expect(ids.every((id) => id.startsWith('team-b/'))).toBe(true);
      expect(await complete('kb://{+document_id}', 'document_id', 'team-a/')).toEqual([]);
      const folders = await complete('kb://{+folder}/', 'folder', '');
      expect(folders).toContain('team-b');
      expect(folders).not.toContain('team-a');
      expect(folders).not.toContain('team-ab');
    });

    it('the prompts that read documents embed only readable ones', async () => {
      const review = await mcp('bob', 'prompts/get', {
        name: 'review_document',
        arguments: { document_id: 'team-a/secret.md' },
      });
      const reviewAbsent = await mcp('bob', 'prompts/get', {
        name: 'review_document',
        arguments: { document_id: 'team-a/absent.md' },
      });
      expect(anonymised(review, 'team-a/secret.md')).toEqual(
        anonymised(reviewAbsent, 'team-a/absent.md'),
      );
      // A folder holding nothing readable is refused as an empty one.
      const folder = await mcp('bob', 'prompts/get', {
        name: 'summarize_folder',
        arguments: { folder: 'team-a' },
      });
      const emptyFolder = await mcp('bob', 'prompts/get', {
        name: 'summarize_folder',
        arguments: { folder: 'team-z' },
      });
      expect(anonymised(folder, 'team-a')).toEqual(anonymised(emptyFolder, 'team-z'));
      const answer = JSON.stringify(
        await mcp('bob', 'prompts/get', {
          name: 'answer_question',
          arguments: { question: `what is the ${SECRET_WORD} launch?` },
        }),
      );
      expect(answer).not.toContain('team-a/');
      expect(answer).not.toContain(SECRET_TITLE);
    });

    it('the change feed gives only the rows of team-b/, whatever the filter, pages full', async () => {
      const own = await changes('bob', {});
      expect(own.map((c) => c.document_id).sort()).toEqual(
        [
          'team-b/open.md',
          ...Array.from({ length: OPEN_MATCHES }, (_, i) => `team-b/many/m${i}.md`),
        ].sort(),
      );
      // Pages of 5 are filled from the readable rows, however many others lie between them.
      expect(await changes('bob', {}, 5)).toEqual(own);
      for (const query of [
        { folder: 'team-a' } as Record<string, string>,
        { folder: 'team-a/many' },
        { folder: 'team-ab' },
        { actor: 'both', operation: 'create' },
        { since: '2000-01-01T00:00:00Z' },
      ]) {
        const rows = await changes('bob', query);
        expect(JSON.stringify(rows)).not.toContain('team-a');
        expect(rows.every((c) => c.document_id.startsWith('team-b/'))).toBe(true);
      }
      expect(await changes('bob', { folder: 'team-a' })).toEqual([]);
      expect((await changes('both', { folder: 'team-a' })).length).toBe(1 + HIDDEN_MATCHES);
      expect(await changes('nobody', {})).toEqual([]);
    });

    it('the folder tree names and counts only readable documents', async () => {
      const tree = async (who: keyof typeof KEYS, parent?: string) =>
        (
          await request(t.baseUrl)
            .get('/documents/folders')
            .query(parent === undefined ? {} : { parent })
            .set(as(who))
            .expect(200)
        ).body as Json;
      const nothing = { documents_here: 0, folders: [], truncated: false };
      expect(await tree('bob')).toEqual({
        parent: null,
        documents_here: 0,
        folders: [{ folder: 'team-b', documents: 1 + OPEN_MATCHES }],
        truncated: false,
      });
      expect(await tree('bob', 'team-b')).toEqual({
        parent: 'team-b',
        documents_here: 1,
        folders: [{ folder: 'team-b/many', documents: OPEN_MATCHES }],
        truncated: false,
      });
      for (const hidden of ['team-a', 'team-a/many', 'team-ab']) {
        expect(await tree('bob', hidden)).toEqual({ parent: hidden, ...nothing });
      }
      // Two readable folders with an unreadable one between them (team-ab sorts between).
      const counts = [
        { folder: 'team-a', documents: 1 + HIDDEN_MATCHES },
        { folder: 'team-b', documents: 1 + OPEN_MATCHES },
      ];
      expect((await tree('alice')).folders).toEqual(counts);
      expect((await tree('both')).folders).toEqual([
        counts[0],
        { folder: 'team-ab', documents: 1 },
        counts[1],
      ]);
      expect(await tree('nobody')).toEqual({ parent: null, ...nothing });
    });

    it('a principal with both folders sees both, and one no rule names sees nothing', async () => {
      const found = JSON.stringify(await tool('both', 'search_knowledge', { query: SECRET_WORD }));
      expect(found).toContain('team-a/secret.md');
      await request(t.baseUrl).get('/documents/team-a/secret.md').set(as('both')).expect(200);
      const none = await request(t.baseUrl).get('/documents').set(as('nobody')).expect(200);
      expect(none.body.items).toEqual([]);
      await request(t.baseUrl).get('/documents/team-b/open.md').set(as('nobody')).expect(404);
    });
  });

  describe('writes', () => {
    it('outside the read grants: not found; readable but not writable: PERMISSION_DENIED / 403; both audited', async () => {
      const hidden = await tool('bob', 'update_document', {
        document_id: 'team-a/secret.md',
        content: 'overwritten',
      });
      const absent = await tool('bob', 'update_document', {
        document_id: 'team-a/absent.md',
        content: 'overwritten',
      });
      expect(anonymised(hidden, 'team-a/secret.md')).toEqual(
        anonymised(absent, 'team-a/absent.md'),
      );
      expect(JSON.parse(hidden.result.content[0].text).error.code).toBe('NOT_FOUND');

      const denied = await request(t.baseUrl)
        .put('/documents/team-b/open.md')
        .set(as('alice'))
        .send({ body: 'changed by alice' })
        .expect(403);
      expect(denied.body.error).toMatchObject({ code: 'PERMISSION_DENIED' });
      const deniedTool = await tool('alice', 'delete_document', { document_id: 'team-b/open.md' });
      expect(JSON.parse(deniedTool.result.content[0].text).error.code).toBe('PERMISSION_DENIED');
      await request(t.baseUrl)
        .post('/documents')
        .set(as('bob'))
        .send({ document_id: 'team-a/new.md', body: 'x' })
        .expect(404);

      // Nothing changed, every refusal is in the audit trail with its principal.
      const body = await request(t.baseUrl).get('/documents/team-b/open.md').set(as('both'));
      expect(body.body.revision).toBe(1);
      const { rows } = await sql.query(
        `SELECT operation, document_id, actor FROM kb_audit WHERE operation LIKE 'refused:%' ORDER BY id`,
      );
      expect(rows).toEqual(
        expect.arrayContaining([
          { operation: 'refused:update', document_id: 'team-a/secret.md', actor: 'bob' },
          { operation: 'refused:update', document_id: 'team-b/open.md', actor: 'alice' },
          { operation: 'refused:delete', document_id: 'team-b/open.md', actor: 'alice' },
          { operation: 'refused:create', document_id: 'team-a/new.md', actor: 'bob' },
        ]),
      );
      const metrics = await request(t.baseUrl).get('/metrics');
      expect(metrics.text).toMatch(/access_denied_total\{surface="mcp"\} [1-9]/);
      expect(metrics.text).toMatch(/access_denied_total\{surface="rest"\} [1-9]/);
    });

    it('the change feed shows a refused attempt to those who may read its document, only', async () => {
      const refused = (rows: Json[]) => rows.map((c) => [c.operation, c.document_id, c.actor]);
      expect(refused(await changes('bob', { operation: 'refused:update' }))).toEqual([
        ['refused:update', 'team-b/open.md', 'alice'],
      ]);
      // Bob's own attempts aimed at team-a/: not his to see.
      expect(refused(await changes('bob', { actor: 'bob' }))).toEqual([]);
      expect(refused(await changes('both', { operation: 'refused:update' }))).toEqual([
        ['refused:update', 'team-b/open.md', 'alice'],
        ['refused:update', 'team-a/absent.md', 'bob'],
        ['refused:update', 'team-a/secret.md', 'bob'],
      ]);
      const [denied] = await changes('both', { operation: 'refused:update', actor: 'alice' });
      expect(denied.revision).toBeNull();
    });

    it('the pipeline routes name and re-queue only readable documents', async () => {
      const none = await request(t.baseUrl)
        .post('/admin/vectors/reindex')
        .set(as('bob'))
        .send({ prefix: 'team-a/' })
        .expect(202);
      expect(none.body.queued).toBe(0);
      const own = await request(t.baseUrl)
        .post('/admin/vectors/reindex')
        .set(as('bob'))
        .send({})
        .expect(202);
      expect(own.body.queued).toBe(1 + OPEN_MATCHES);
      const status = await request(t.baseUrl).get('/admin/vectors/status').set(as('bob'));
      expect(JSON.stringify(status.body)).not.toContain('team-a/');
    });

    it('a bulk write answers each item as its single write would', async () => {
      const response = await request(t.baseUrl)
        .post('/documents/bulk')
        .set(as('alice'))
        .send({
          items: [
            { op: 'create', document_id: 'team-a/bulk.md', body: 'ok' },
            { op: 'update', document_id: 'team-b/open.md', body: 'no' },
            { op: 'create', document_id: 'hidden/bulk.md', body: 'no' },
          ],
        })
        .expect(200);
      expect(response.body.results.map((r: Json) => [r.status, r.error?.code ?? 'ok'])).toEqual([
        [201, 'ok'],
        [403, 'PERMISSION_DENIED'],
        [404, 'NOT_FOUND'],
      ]);
    });

    it('a move needs a write grant on both ids', async () => {
      const out = await request(t.baseUrl)
        .post('/documents/team-b/open.md/move')
        .set(as('bob'))
        .send({ to: 'team-a/stolen.md' })
        .expect(404);
      expect(out.body.error.document_id).toBe('team-a/stolen.md');
      await request(t.baseUrl)
        .post('/documents/team-a/secret.md/move')
        .set(as('bob'))
        .send({ to: 'team-b/stolen.md' })
        .expect(404);
      await request(t.baseUrl)
        .post('/documents/team-b/open.md/move')
        .set(as('alice'))
        .send({ to: 'team-a/taken.md' })
        .expect(403);
      await request(t.baseUrl).get('/documents/team-b/open.md').set(as('bob')).expect(200);
    });

    it('within the write grants, writes go through', async () => {
      await request(t.baseUrl)
        .post('/documents')
        .set(as('alice'))
        .send({ document_id: 'team-a/alice.md', body: 'by alice' })
        .expect(201);
      const updated = await tool('bob', 'patch_document', {
        document_id: 'team-b/open.md',
        old_str: 'runbooks',
        new_str: 'playbooks',
      });
      expect(updated.result.isError).toBeUndefined();
    });
  });

  it('an id written in the other Unicode form is answered with the readable one it looks like, and only that', async () => {
    const composed = (folder: string) => `${folder}/caf\u00e9.md`;
    const decomposed = (folder: string) => `${folder}/cafe\u0301.md`;
    for (const folder of ['team-a', 'team-b']) {
      await request(t.baseUrl)
        .post('/documents')
        .set(as('both'))
        .send({ document_id: composed(folder), body: 'Caf\u00e9 notes.' })
        .expect(201);
    }
    const get = (who: keyof typeof KEYS, id: string) =>
      request(t.baseUrl)
        .get(`/documents/${encodeURIComponent(id)}`)
        .set(as(who));

    const hinted = await get('bob', decomposed('team-b'));
    expect(hinted.status).toBe(404);
    expect(hinted.body.error).toMatchObject({
      code: 'NOT_FOUND',
      document_id: decomposed('team-b'),
      same_name: composed('team-b'),
    });
    expect(hinted.body.error.message).toContain('composed (NFC)');
    const viaMcp = await tool('bob', 'get_document', { document_id: decomposed('team-b') });
    expect(viaMcp.result.isError).toBe(true);
    expect(JSON.stringify(viaMcp.result.content)).toContain(composed('team-b'));

    // The look-alike of an unreadable document is not named: the answer is an absent one's.
    const hidden = await get('bob', decomposed('team-a'));
    const absent = await get('bob', 'team-a/absent.md');
    expect(hidden.status).toBe(404);
    expect(anonymised(hidden.body, decomposed('team-a'))).toEqual(
      anonymised(absent.body, 'team-a/absent.md'),
    );
    expect((await get('both', decomposed('team-a'))).body.error.same_name).toBe(composed('team-a'));
    // The composed id still reads; one with no look-alike is a plain absence.
    await get('bob', composed('team-b')).expect(200);
    expect((await get('bob', 'team-b/th\u00e9.md')).body.error).not.toHaveProperty('same_name');
  });
});
