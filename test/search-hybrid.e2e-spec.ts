import type { Client } from 'pg';
import request from 'supertest';
import { type PlanNode, planNodes } from './support/explain';
import { startTestApp, TestApp } from './support/app';
import { callTool, toolJson } from './support/mcp-http';
import { changesStatement } from '../src/database/change-log';
import { lexicalRecord } from '../src/vectors/lexical/lexical-record';
import { LexicalStore } from '../src/vectors/lexical/lexical.store';
import { resultsStatement } from '../src/vectors/lexical/lexical-records.repository';
import { waitFor } from './support/wait';

const DOCS = [
  {
    document_id: 'kb/ops/leases.md',
    body: '# Leases\n\n## Lost leases\n\nWhen a worker sees ERR_LEASE_LOST_42 it stops the batch and gives the documents back.',
  },
  {
    document_id: 'kb/ops/backups.md',
    body: '# Backups\n\n## Restoring\n\nRestore the cluster from the nightly snapshot, then replay the write-ahead log to the point you need.',
  },
  {
    document_id: 'kb/dev/config.md',
    body: '# Configuration\n\nSet `clockToleranceSeconds` to accept tokens from a server whose clock runs a little fast.',
    tags: ['dev'],
  },
  {
    document_id: 'kb/dev/cjk.md',
    body: '# 日本語\n\n検索 エンジン の テスト です。 Arabic: البحث عن المستندات',
  },
  {
    document_id: 'kb/intl/notes.md',
    body: '# Notizen\n\n東京の天気は晴れ。\n\n每天晚上备份数据库。\n\nDie Datenbanksicherungen laufen nachts.',
  },
  {
    document_id: 'kb/quotes/hamlet.md',
    body: '# Hamlet\n\nTo be, or not to be, that is the question.',
  },
  {
    document_id: 'other/leases-elsewhere.md',
    body: '# Leases elsewhere\n\nAnother note about ERR_LEASE_LOST_42 outside the kb folder.',
  },
];

/**
 * Hybrid search (docs/search.md): BM25 over the documents and passages the vector worker
 * analyses, fused with the vector ranking; `mode` picks one side.
 */
describe('hybrid search', () => {
  let t: TestApp;
  let sql: Client;
  const search = async (query: Record<string, string>) =>
    (await request(t.baseUrl).get('/search').query(query).expect(200)).body;

  beforeAll(async () => {
    t = await startTestApp({ VECTOR_SYNC_ENABLED: 'true' });
    sql = await t.db.client();
    for (const doc of DOCS) {
      await request(t.baseUrl).post('/documents').send(doc).expect(201);
    }
    await waitFor(async () => {
      const { rows } = await sql.query(
        `SELECT count(*)::int AS n FROM kb_documents WHERE vector_status = 'ready'`,
      );
      return rows[0].n === DOCS.length;
    }, 'every document to be ready');
  });
  afterAll(() => t.close());

  it('keeps the passages the vector side embeds, with their heading paths', async () => {
    const { rows } = await sql.query(
      `SELECT chunk_index, heading, revision FROM kb_passages WHERE document_id = 'kb/ops/leases.md'`,
    );
    expect(rows).toEqual([{ chunk_index: 0, heading: 'Leases', revision: 1 }]);
  });

  it.each(['hybrid', 'lexical'])(
    'finds an exact identifier first (%s), with heading path and highlighted snippet',
    async (mode) => {
      const body = await search({ query: 'ERR_LEASE_LOST_42', mode, prefix: 'kb' });
      expect(body.mode).toBe(mode);
      expect(body.results[0]).toMatchObject({
        document_id: 'kb/ops/leases.md',
        title: 'Leases',
        heading_path: 'Leases',
        snippet: expect.stringMatching(/\*\*ERR\*\*_\*\*LEASE\*\*_\*\*LOST\*\*_\*\*42\*\*/),
      });
      expect(body.results.map((r: { document_id: string }) => r.document_id)).not.toContain(
        'other/leases-elsewhere.md',
      );
      expect(body.degraded).toBeUndefined();
    },
  );

  it('finds a question asked in other words, and stems (restoring ⇒ restore)', async () => {
    const body = await search({ query: 'how do I restore a snapshot?' });
    expect(body.results[0].document_id).toBe('kb/ops/backups.md');
    const stemmed = await search({ query: 'restoring snapshots', mode: 'lexical' });
    expect(stemmed.results[0].document_id).toBe('kb/ops/backups.md');
  });

  it('keeps camelCase identifiers searchable, and pushes tags down', async () => {
    const body = await search({ query: 'clockToleranceSeconds', mode: 'lexical', tags: 'dev' });
    expect(body.results.map((r: { document_id: string }) => r.document_id)).toEqual([
      'kb/dev/config.md',
    ]);
    const none = await search({ query: 'clockToleranceSeconds', mode: 'lexical', tags: 'ops' });
    expect(none.results).toEqual([]);
  });

  it('finds text in other scripts', async () => {
    const cjk = await search({ query: '検索', mode: 'lexical' });
    expect(cjk.results[0]?.document_id).toBe('kb/dev/cjk.md');
    const arabic = await search({ query: 'المستندات', mode: 'lexical' });
    expect(arabic.results[0]?.document_id).toBe('kb/dev/cjk.md');
  });

  it.each([
    ['東京', 'a Japanese word inside a run without spaces'],
    ['天気', 'the end of that run'],
    ['备份', 'a Chinese word inside a run'],
    ['数据库', 'another'],
    ['Datenbank', "a German compound's part"],
    ['to be or not to be', 'stop words only'],
  ])('finds %s first (%s), in lexical and hybrid mode', async (query) => {
    for (const mode of ['lexical', 'hybrid']) {
      const body = await search({ query, mode });
      const expected = query.startsWith('to be') ? 'kb/quotes/hamlet.md' : 'kb/intl/notes.md';
      expect(body.results[0]?.document_id).toBe(expected);
    }
  });

  it.each([
    ['only stop words', 'the and of a'],
    ['emoji', '🦄🔥 ✨'],
    ['a 2 000-character identifier', `x${'_y'.repeat(999)}`],
    ['a question of 300 words', 'how do leases work when a worker stops '.repeat(37)],
    [
      '280 words no document holds',
      Array.from({ length: 280 }, (_, i) =>
        [...(i * 7919).toString(26).padStart(5, '0')]
          .map((c) => String.fromCharCode(97 + parseInt(c, 26)))
          .join(''),
      ).join(' '),
    ],
    ['only punctuation', '?!... ,;'],
    ['tsquery operators', "&|!():*<> 'lease' & !backup"],
    ['SQL', "'; DROP TABLE kb_passages; --"],
    ['unmatched quotes', '"lost leases'],
    ['a backslash', 'C:\\path\\to\\file'],
  ])('%s: an answer, never an error (every mode)', async (_name, query) => {
    for (const mode of ['hybrid', 'lexical', 'vector']) {
      const body = await search({ query, mode });
      expect(Array.isArray(body.results)).toBe(true);
    }
    const { rows } = await sql.query(`SELECT count(*)::int AS n FROM kb_passages`);
    expect(rows[0].n).toBeGreaterThan(0);
  });

  it.each([
    ['empty', ''],
    ['too long', 'word '.repeat(2000)],
  ])('%s query: INVALID_ARGUMENT naming the field', async (_name, query) => {
    const response = await request(t.baseUrl).get('/search').query({ query }).expect(400);
    expect(response.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'query' });
  });

  it('refuses an unknown mode, naming it', async () => {
    const response = await request(t.baseUrl)
      .get('/search')
      .query({ query: 'leases', mode: 'fuzzy' })
      .expect(400);
    expect(response.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'mode' });
  });

  it('search_knowledge takes mode, and answers heading_path and resource links', async () => {
    const envelope = await callTool(t.baseUrl, '/mcp', 'search_knowledge', {
      query: 'ERR_LEASE_LOST_42',
      mode: 'lexical',
    });
    const result = toolJson(envelope);
    expect(result.mode).toBe('lexical');
    expect(result.results[0]).toMatchObject({
      document_id: expect.stringMatching(/leases/),
      heading_path: expect.stringMatching(/Leases/),
    });
  });

  it('forgets a deleted document at once, and its passages once the worker has seen it', async () => {
    await request(t.baseUrl).post('/documents').send({
      document_id: 'kb/tmp/gone.md',
      body: '# Gone\n\nThe word zanzibarite appears only here.',
    });
    await waitFor(async () => {
      const body = await search({ query: 'zanzibarite', mode: 'lexical' });
      return body.results.length === 1;
    }, 'the new document to be found');
    await request(t.baseUrl).delete('/documents/kb/tmp/gone.md').expect(200);
    for (const mode of ['hybrid', 'lexical', 'vector']) {
      const body = await search({ query: 'zanzibarite', mode });
      expect(body.results.map((r: { document_id: string }) => r.document_id)).not.toContain(
        'kb/tmp/gone.md',
      );
    }
    await waitFor(async () => {
      const { rows } = await sql.query(
        `SELECT count(*)::int AS n FROM kb_passages WHERE document_id = 'kb/tmp/gone.md'`,
      );
      return rows[0].n === 0;
    }, 'the passages to be removed');
  });

  it('follows a moved document: found under its new id in every mode, never under the old one', async () => {
    await request(t.baseUrl)
      .post('/documents')
      .send({ document_id: 'kb/tmp/mover.md', body: '# Mover\n\nThe quillwort survey.' })
      .expect(201);
    const ready = async (id: string) =>
      (
        await sql.query(
          `SELECT count(*)::int AS n FROM kb_documents WHERE document_id = $1 AND vector_status = 'ready'`,
          [id],
        )
      ).rows[0].n === 1;
    await waitFor(() => ready('kb/tmp/mover.md'), 'the document to be indexed');
    await request(t.baseUrl)
      .post('/documents/kb/tmp/mover.md/move')
      .send({ to: 'kb/moved/mover.md' })
      .expect(200);
    await waitFor(() => ready('kb/moved/mover.md'), 'the moved document to be indexed');
    for (const mode of ['hybrid', 'lexical']) {
      const ids = (await search({ query: 'quillwort survey', mode })).results.map(
        (r: { document_id: string }) => r.document_id,
      );
      expect([mode, ids[0]]).toEqual([mode, 'kb/moved/mover.md']);
      expect(ids).not.toContain('kb/tmp/mover.md');
    }
    const { rows } = await sql.query(
      `SELECT (SELECT count(*)::int FROM kb_passages WHERE document_id = 'kb/tmp/mover.md') AS passages,
              (SELECT count(*)::int FROM kb_chunk_vectors WHERE document_id = 'kb/tmp/mover.md') AS vectors,
              (SELECT count(*)::int FROM kb_lexical_documents WHERE document_id = 'kb/tmp/mover.md') AS lexical`,
    );
    expect(rows[0]).toEqual({ passages: 0, vectors: 0, lexical: 0 });
  });

  it('says so when results are found by their words only because their vectors are still coming', async () => {
    // A document written a moment ago, chunked but not embedded yet: held back an hour as
    // a retry (the claim ignores the backoff of a first attempt, so it counts as one).
    await sql.query(`
      INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash,
                                vector_status, vector_attempts, vector_next_attempt_at)
      VALUES ('kb/new/fresh.md', 'kb/new', 'Fresh', 'xylophonic', 'h', 'pending', 1,
              now() + interval '1 hour')`);
    // Its passages and terms, written as the worker writes them before it embeds.
    const passages = [{ headings: ['Fresh'], content: 'xylophonic' }];
    await t.app.get(LexicalStore).write([
      {
        documentId: 'kb/new/fresh.md',
        revision: 1,
        tags: [],
        passages: [{ index: 0, heading: 'Fresh', content: 'xylophonic' }],
        record: lexicalRecord('Fresh', 'xylophonic', passages),
      },
    ]);
    const body = await search({ query: 'xylophonic' });
    expect(body).toMatchObject({
      mode: 'hybrid',
      degraded: true,
      degraded_reason: expect.stringMatching(/1 of the results is not embedded yet/),
    });
    expect(body.results[0].document_id).toBe('kb/new/fresh.md');
    const settled = await search({ query: 'ERR_LEASE_LOST_42' });
    expect(settled.degraded).toBeUndefined();
  });

  it('never lets an older revision replace a newer one (two workers after a lease expired)', async () => {
    await sql.query(`
      INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash, revision,
                                vector_status, vector_attempts, vector_next_attempt_at)
      VALUES ('kb/race/doc.md', 'kb/race', 'Race', 'b', 'h', 2, 'pending', 1,
              now() + interval '1 hour')`);
    const store = t.app.get(LexicalStore);
    const write = (revision: number, word: string) =>
      store.write([
        {
          documentId: 'kb/race/doc.md',
          revision,
          tags: [],
          passages: [{ index: 0, heading: 'Race', content: word }],
          record: lexicalRecord('Race', word, [{ headings: ['Race'], content: word }]),
        },
      ]);
    await write(2, 'newerwordzz');
    await write(1, 'olderwordzz');
    const found = await search({ query: 'newerwordzz', mode: 'lexical' });
    expect(found.results.map((r: { document_id: string }) => r.document_id)).toEqual([
      'kb/race/doc.md',
    ]);
    expect((await search({ query: 'olderwordzz', mode: 'lexical' })).results).toEqual([]);
    const { rows } = await sql.query(
      `SELECT revision, content FROM kb_passages WHERE document_id = 'kb/race/doc.md'`,
    );
    expect(rows).toEqual([{ revision: 2, content: 'newerwordzz' }]);
  });

  it('reads PostgreSQL by index only, over 50 000 documents: the results, the change log', async () => {
    const record = lexicalRecord('Bulk', 'body of a bulk document', []);
    await sql.query(`
      INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash, vector_status)
      SELECT 'bulk/doc-' || g || '.md', 'bulk', 'Bulk ' || g, 'body ' || g, 'h', 'ready'
        FROM generate_series(1, 50000) g`);
    await sql.query(
      `INSERT INTO kb_passages (document_id, chunk_index, revision, title, heading, content)
       SELECT 'bulk/doc-' || g || '.md', c, 1, 'Bulk ' || g, 'Section ' || c, 'passage ' || g
         FROM generate_series(1, 50000) g, generate_series(0, 3) c`,
    );
    await sql.query(
      `INSERT INTO kb_lexical_documents
              (document_id, revision, analyzer, tags, lengths, passage_lengths, terms, postings)
       SELECT 'bulk/doc-' || g || '.md', 1, 1, '{}', '{1,0,5}', '{5}', $1, $2
         FROM generate_series(1, 50000) g`,
      [record.terms.join('\n'), Buffer.alloc(record.terms.length * 8)],
    );
    await sql.query('ANALYZE kb_documents, kb_passages, kb_lexical_documents, kb_lexical_changes');
    const plan = async ([text, values]: [string, unknown[]]) => {
      const { rows } = await sql.query(`EXPLAIN (FORMAT JSON) ${text}`, values);
      return planNodes((rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0].Plan);
    };
    const seqScans = (nodes: PlanNode[]) =>
      nodes.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']);

    const results = await plan(
      resultsStatement([
        { documentId: 'bulk/doc-42.md', passage: 2 },
        { documentId: 'bulk/doc-4242.md', passage: 0 },
      ]),
    );
    const byIndex = (nodes: PlanNode[]) =>
      nodes.filter((n) => n['Index Name'] !== undefined).map((n) => n['Relation Name']);
    expect(byIndex(results).sort()).toEqual(['kb_documents', 'kb_passages']);
    expect(seqScans(results)).toEqual([]);

    const [{ max }] = (await sql.query(`SELECT max(id)::text AS max FROM kb_lexical_changes`)).rows;
    const log = await plan(
      changesStatement(
        { log: 'kb_lexical_changes', meta: 'kb_lexical_meta' },
        { generation: 1, appliedId: max, inProgress: ['1'] },
      ),
    );
    expect(seqScans(log).filter((name) => name !== 'kb_lexical_meta')).toEqual([]);
    expect(log.some((n) => n['Index Name'] === 'kb_lexical_changes_pkey')).toBe(true);
    // Writing 50 000 documents with their passages takes some 10 s, three times that on a
    // slow shared host.
  }, 120_000);
});

describe('hybrid search with the Qdrant store unreachable', () => {
  let t: TestApp;
  let sql: Client;

  beforeAll(async () => {
    // The Qdrant client warns that it cannot read the server's version: expected here.
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    // Nothing listens on the discard port: the store never becomes ready.
    t = await startTestApp({
      VECTOR_SYNC_ENABLED: 'true',
      VECTOR_STORE: 'qdrant',
      QDRANT_URL: 'http://127.0.0.1:9',
      VECTOR_RETRY_BASE_MS: '50',
    });
    sql = await t.db.client();
  });
  afterAll(async () => {
    await t.close();
    jest.restoreAllMocks();
  });

  it('finds new documents by their words (passages come before the store), says degraded, and mode=vector fails', async () => {
    await request(t.baseUrl)
      .post('/documents')
      .send({
        document_id: 'q/ids.md',
        body: '# Codes\n\nThe code QX_ORPHAN_77 means a lost lease.',
      })
      .expect(201);
    await waitFor(async () => {
      const { rows } = await sql.query(
        `SELECT count(*)::int AS n FROM kb_passages WHERE document_id = 'q/ids.md'`,
      );
      return rows[0].n > 0;
    }, 'the passages to be written');
    const hybrid = await request(t.baseUrl)
      .get('/search')
      .query({ query: 'QX_ORPHAN_77' })
      .expect(200);
    expect(hybrid.body).toMatchObject({
      mode: 'hybrid',
      degraded: true,
      degraded_reason: expect.stringMatching(/vector store/),
      results: [expect.objectContaining({ document_id: 'q/ids.md' })],
    });
    expect(hybrid.text).not.toContain('127.0.0.1');
    // The store is down, not PostgreSQL: 503 with when to retry, naming the store.
    const vector = await request(t.baseUrl)
      .get('/search')
      .query({ query: 'QX_ORPHAN_77', mode: 'vector' })
      .expect(503);
    expect(Number(vector.headers['retry-after'])).toBeGreaterThan(0);
    expect(vector.body.error.message).toMatch(/vector store/);
    expect(vector.body.error.message).not.toMatch(/database/);
    expect(vector.text).not.toContain('127.0.0.1');
  });
});
