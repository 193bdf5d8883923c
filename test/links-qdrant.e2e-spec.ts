import { randomBytes } from 'node:crypto';
import type { Client } from 'pg';
import request from 'supertest';
import { idPath } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';
import type { Json } from './support/mcp-http';
import { deleteCollection } from './support/qdrant-rest';
import { describeWithQdrant, testQdrantUrl } from './support/qdrant';
import { waitFor } from './support/wait';

/**
 * Links with the lexical side in Qdrant (LEXICAL_STORE=qdrant, docs/search.md): links live in
 * PostgreSQL whatever the store, and the revisions a move writes in the documents that link
 * to the moved one (docs/documents.md, "Moves keep links working") reach the pipeline like any
 * write, so a search finds those documents by their new words.
 */
describeWithQdrant('links with the lexical side in Qdrant', 'server')(
  'links with LEXICAL_STORE=qdrant',
  () => {
    jest.setTimeout(180_000);
    const url = testQdrantUrl()!;
    const collection = `kb_links_${randomBytes(4).toString('hex')}`;
    let t: TestApp;
    let sql: Client;

    beforeAll(async () => {
      t = await startTestApp({
        QDRANT_URL: url,
        ...(process.env.QDRANT_URL ? { QDRANT_API_KEY: process.env.QDRANT_API_KEY ?? '' } : {}),
        QDRANT_COLLECTION: collection,
        LEXICAL_STORE: 'qdrant',
        VECTOR_SYNC_ENABLED: 'true',
        VECTOR_RETRY_BASE_MS: '50',
      });
      sql = await t.db.client();
    }, 120_000);
    afterAll(async () => {
      await t?.close();
      await deleteCollection(url, collection).catch(() => undefined);
    });

    const write = (document_id: string, body: string) =>
      request(t.baseUrl).post('/documents').send({ document_id, body }).expect(201);
    /** Waits until every document's current revision is indexed. */
    const indexed = () =>
      waitFor(
        async () => {
          const { rows } = await sql.query(
            `SELECT count(*)::int AS n FROM kb_documents
              WHERE deleted_at IS NULL
                AND (vector_status NOT IN ('ready', 'skipped') OR vector_revision <> revision)`,
          );
          return rows[0].n === 0;
        },
        'every document to be indexed',
        { timeoutMs: 90_000, intervalMs: 100 },
      );
    const lexical = async (query: string) =>
      (
        await request(t.baseUrl).get('/search').query({ query, mode: 'lexical' }).expect(200)
      ).body.results.map((hit: Json) => hit.document_id);

    it('indexes the revisions a move writes, and reads links from PostgreSQL', async () => {
      await write('ops/quasar.md', '# Quasar\n\nThe service that serves the quasar data.');
      await write('runbooks/restart.md', '# Restart\n\nRestart [[quasar]] first.');
      await indexed();
      expect(await lexical('zephyrine')).toEqual([]);

      await request(t.baseUrl)
        .post(`${idPath('ops/quasar.md')}/move`)
        .send({ to: 'ops/zephyrine.md' })
        .expect(200);
      const linking = (await request(t.baseUrl).get(idPath('runbooks/restart.md')).expect(200))
        .body;
      expect(linking).toMatchObject({
        revision: 2,
        body: '# Restart\n\nRestart [[zephyrine]] first.',
      });
      await indexed();
      // The linking document's new revision reached Qdrant: its new words find it.
      expect(await lexical('zephyrine')).toContain('runbooks/restart.md');

      const backlinks = (
        await request(t.baseUrl)
          .get(`${idPath('ops/zephyrine.md')}/backlinks`)
          .expect(200)
      ).body;
      expect(backlinks.backlinks.map((b: Json) => b.document_id)).toEqual(['runbooks/restart.md']);
      const neighbourhood = (
        await request(t.baseUrl)
          .get(`${idPath('runbooks/restart.md')}/neighbourhood`)
          .expect(200)
      ).body;
      expect(neighbourhood.neighbours.map((n: Json) => n.document_id)).toEqual([
        'ops/zephyrine.md',
      ]);
    });

    it('finds a document by the texts of the links to it (its anchor field) in Qdrant', async () => {
      await write('ops/nebula.md', '# Nebula\n\nThe service that renders star maps.');
      await write('ops/index.md', '# Ops\n\n- [the glimmerwick renderer](nebula.md)');
      await waitFor(
        async () => (await lexical('glimmerwick')).includes('ops/nebula.md'),
        'the link text to find its target',
        { timeoutMs: 60_000, intervalMs: 100 },
      );
      // Written again without the link: the target loses the words in Qdrant too.
      await request(t.baseUrl)
        .put(idPath('ops/index.md'))
        .send({ body: '# Ops\n\nNothing here.' })
        .expect(200);
      await waitFor(
        async () => (await lexical('glimmerwick')).length === 0,
        'the words to go with the link',
        { timeoutMs: 60_000, intervalMs: 100 },
      );
    });
  },
);
