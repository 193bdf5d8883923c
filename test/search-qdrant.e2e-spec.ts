import { randomBytes } from 'node:crypto';
import type { Client } from 'pg';
import request from 'supertest';
import { startTestApp, TestApp } from './support/app';
import { callTool } from './support/mcp-http';
import { deleteCollection, qdrantRequest } from './support/qdrant-rest';
import { describeWithQdrant, testQdrantUrl } from './support/qdrant';
import { waitFor } from './support/wait';
import { namedKeys } from './support/keys';

const KEYS = {
  both: 'both-key-0123456789abcdef0123',
  bob: 'bob-key-0123456789abcdef01234',
};
const { apiKeys: API_KEYS, as } = namedKeys(KEYS);
/** Bob reads team-b/ only; `both` reads everything. */
const POLICY = {
  rules: [
    { who: ['key:bob'], read: ['team-b/'], write: ['team-b/'] },
    { who: ['key:both'], read: '*', write: ['*'] },
  ],
};

interface Hit {
  document_id: string;
  score: number;
  snippet: string;
  heading_path: string;
}

/**
 * Search with the lexical side in Qdrant (LEXICAL_STORE=qdrant, docs/search.md) on the run's
 * real Qdrant node: the pipeline writes each document's BM25 shares as a sparse vector beside
 * the passages' vectors, a search asks Qdrant for both sides in one request with the caller's
 * grants, folder and tags as payload filters, and no server process holds an index, so a
 * second server on the same database and collection answers at once, whoever wrote.
 */
describeWithQdrant('the lexical side in Qdrant', 'server')(
  'search with LEXICAL_STORE=qdrant',
  () => {
    jest.setTimeout(180_000);
    const url = testQdrantUrl()!;
    const collection = `kb_lexical_${randomBytes(4).toString('hex')}`;
    let t: TestApp;
    let replica: TestApp;
    let sql: Client;

    beforeAll(async () => {
      const env = {
        API_KEYS,
        ACCESS_POLICY: JSON.stringify(POLICY),
        QDRANT_URL: url,
        ...(process.env.QDRANT_URL ? { QDRANT_API_KEY: process.env.QDRANT_API_KEY ?? '' } : {}),
        QDRANT_COLLECTION: collection,
        LEXICAL_STORE: 'qdrant',
        VECTOR_RETRY_BASE_MS: '50',
      };
      t = await startTestApp({ ...env, VECTOR_SYNC_ENABLED: 'true' });
      replica = await startTestApp({ ...env, VECTOR_SYNC_ENABLED: 'false' }, t.db);
      sql = await t.db.client();
    }, 120_000);
    afterAll(async () => {
      await replica?.close();
      await t?.close();
      await deleteCollection(url, collection).catch(() => undefined);
    });

    const write = (document: Record<string, unknown>) =>
      request(t.baseUrl).post('/documents').set(as('both')).send(document).expect(201);
    const search = async (
      app: TestApp,
      query: Record<string, string>,
      who: keyof typeof KEYS = 'both',
    ): Promise<Hit[]> =>
      (await request(app.baseUrl).get('/search').set(as(who)).query(query).expect(200)).body
        .results;
    const ids = (hits: Hit[]) => hits.map((hit) => hit.document_id);
    /** Waits until no document waits for the pipeline. */
    const indexed = () =>
      waitFor(
        async () => {
          const { rows } = await sql.query(
            `SELECT count(*)::int AS n FROM kb_documents
              WHERE deleted_at IS NULL AND vector_status NOT IN ('ready', 'skipped')`,
          );
          return rows[0].n === 0;
        },
        'every document to be indexed',
        { timeoutMs: 90_000, intervalMs: 100 },
      );

    it('finds documents by their words and identifiers, in every mode, from a server that holds no index', async () => {
      await write({
        document_id: 'ops/leases.md',
        body: '# Leases\n\nA worker that loses its lease logs ERR_LEASE_LOST_42 and gives the batch back.',
      });
      await write({
        document_id: 'ops/backups.md',
        body: '# Backups\n\nTake a nightly pg_dump.\n\n## Restore\n\nUse pg_restore to recover lost data.',
      });
      await write({
        document_id: 'dev/build.md',
        body: '# Building\n\nRun npm run build to compile the TypeScript sources.',
      });
      await indexed();

      for (const app of [t, replica]) {
        // The code as written first; its parts (`lost`) find the backups' page after it.
        const exact = await search(app, { query: 'ERR_LEASE_LOST_42', mode: 'lexical' });
        expect(ids(exact)[0]).toBe('ops/leases.md');
        expect(exact[0].snippet).toContain('**ERR**_**LEASE**_**LOST**_**42**');
        expect(ids(await search(app, { query: 'recover lost data' }))[0]).toBe('ops/backups.md');
        const vector = await search(app, { query: 'compile typescript', mode: 'vector' });
        expect(ids(vector)[0]).toBe('dev/build.md');
        expect(vector[0].heading_path).toBe('Building');
      }
      // Each document's own point holds its lexical side; the passages hold their vectors.
      const documents = await qdrantRequest<{ count: number }>(
        url,
        'POST',
        `/collections/${collection}/points/count`,
        { exact: true, filter: { must: [{ key: 'kind', match: { value: 'document' } }] } },
      );
      expect(documents.count).toBe(3);

      const status = (
        await request(replica.baseUrl).get('/admin/vectors/status').set(as('both')).expect(200)
      ).body;
      expect(status.lexical).toMatchObject({ store: 'qdrant', loaded: false, documents: 3 });
      expect(status.store).toMatchObject({
        name: 'qdrant',
        collection: {
          name: collection,
          layout: 'shared',
          shards: 1,
          replication_factor: 1,
          write_consistency: 1,
          // Qdrant's optimisers keep 8 segments a shard unless QDRANT_SEGMENTS says otherwise.
          segments: 8,
          // The latent-semantic model ranks: the passages' hashed vectors need no graph.
          passage_graph: false,
        },
      });
      // Nothing of an index is kept for a restart either.
      const { rows } = await sql.query(`SELECT count(*)::int AS n FROM kb_lexical_snapshot`);
      expect(rows[0].n).toBe(0);
    });

    it('applies the grants, the folder and the tags inside Qdrant: `limit` results still come back', async () => {
      // Many strong matches where Bob may not read, a few weaker ones where he may.
      const hidden = Array.from({ length: 40 }, (_, i) => ({
        op: 'create',
        document_id: `team-a/needle-${i}.md`,
        title: 'needle needle',
        tags: ['haystack'],
        body: `# Needle ${i}\n\nneedle needle needle haystack needle.`,
      }));
      const open = Array.from({ length: 6 }, (_, i) => ({
        op: 'create',
        document_id: `team-b/${i % 2 === 0 ? 'even' : 'odd'}/note-${i}.md`,
        tags: i % 2 === 0 ? ['haystack', 'even'] : ['haystack'],
        body: `# Note ${i}\n\nSomewhere in this note there is one needle.`,
      }));
      await request(t.baseUrl)
        .post('/documents/bulk')
        .set(as('both'))
        .send({ items: [...hidden, ...open] })
        .expect(200);
      await indexed();

      for (const mode of ['hybrid', 'lexical', 'vector']) {
        const bob = await search(t, { query: 'needle', mode, limit: '5' }, 'bob');
        expect({ mode, count: bob.length }).toEqual({ mode, count: 5 });
        expect(ids(bob).every((id) => id.startsWith('team-b/'))).toBe(true);
      }
      expect(ids(await search(t, { query: 'needle', mode: 'lexical', limit: '5' }))).toEqual(
        expect.arrayContaining([expect.stringMatching(/^team-a\//)]),
      );
      const folder = await search(t, { query: 'needle', prefix: 'team-b/even', limit: '10' });
      expect(ids(folder).sort()).toEqual([
        'team-b/even/note-0.md',
        'team-b/even/note-2.md',
        'team-b/even/note-4.md',
      ]);
      const tagged = await search(t, {
        query: 'needle',
        tags: 'haystack,even',
        mode: 'lexical',
        limit: '10',
      });
      expect(ids(tagged).sort()).toEqual(ids(folder).sort());
      // Over MCP, the same grants.
      const tool = await callTool(
        t.baseUrl,
        '/mcp',
        'search_knowledge',
        { query: 'needle', limit: 3 },
        as('bob'),
      );
      const text = JSON.stringify(tool);
      expect(text).toContain('team-b/');
      expect(text).not.toContain('team-a/');
    });

    it("ranks with the in-memory index's formula: the same scores once every point is written with today's lengths", async () => {
      // Before any document is deleted: Qdrant counts a deleted point in its idf until it
      // cleans the segment up (docs/search.md), as Lucene counts deleted documents until a merge.
      // Documents of unlike lengths, titles and headings, written in batches the pipeline
      // indexes with the mean lengths of their time.
      const words = ['quartz', 'basalt', 'granite', 'marble', 'slate', 'shale', 'gneiss'];
      const items = Array.from({ length: 30 }, (_, i) => ({
        op: 'create',
        document_id: `rocks/r-${i}.md`,
        title: `${words[i % 7]} ${i % 3 === 0 ? words[(i + 2) % 7] : ''}`.trim(),
        body: `# ${words[(i + 1) % 7]}\n\n${Array.from({ length: 5 + ((i * 7) % 40) }, (_, k) => words[(i * k + k) % 7]).join(' ')}\n\n## ${words[(i + 3) % 7]}\n\n${words[i % 7]} and more ${words[(i + 4) % 7]}.`,
      }));
      for (let at = 0; at < items.length; at += 10) {
        await request(t.baseUrl)
          .post('/documents/bulk')
          .set(as('both'))
          .send({ items: items.slice(at, at + 10) })
          .expect(200);
        await indexed();
      }
      // A server with the index in its own memory, on the same records.
      const local = await startTestApp(
        { API_KEYS, ACCESS_POLICY: JSON.stringify(POLICY), VECTOR_SYNC_ENABLED: 'false' },
        t.db,
      );
      try {
        // A reindex writes every document's point again from its record.
        await request(t.baseUrl).post('/admin/vectors/reindex').set(as('both')).expect(202);
        await indexed();
        const queries = ['quartz granite', 'marble slate shale', 'gneiss', 'basalt quartz marble'];
        const scored = async (app: TestApp, query: string) =>
          new Map(
            (await search(app, { query, mode: 'lexical', limit: '50' })).map((hit) => [
              hit.document_id,
              hit.score,
            ]),
          );
        let last: unknown;
        await waitFor(
          async () => {
            for (const query of queries) {
              const [inQdrant, inMemory] = [await scored(t, query), await scored(local, query)];
              last = { query, inQdrant: [...inQdrant], inMemory: [...inMemory] };
              expect(inMemory.size).toBeGreaterThan(3);
              if (inQdrant.size !== inMemory.size) return false;
              for (const [id, score] of inMemory) {
                // Qdrant keeps the values in 32 bits.
                if (!(Math.abs((inQdrant.get(id) ?? 0) - score) <= 1e-5 * score)) return false;
              }
            }
            return true;
          },
          "the lexical scores in Qdrant to equal the in-memory index's",
          { timeoutMs: 60_000, intervalMs: 250 },
        ).catch((error: Error) => {
          throw new Error(`${error.message}: ${JSON.stringify(last, null, 1)}`);
        });
      } finally {
        await local.close();
      }
    });

    it('follows updates, deletes and restores at once, on every server', async () => {
      await write({ document_id: 'notes/change.md', body: '# Change\n\nThe zebrafish tank.' });
      await indexed();
      expect(ids(await search(replica, { query: 'zebrafish', mode: 'lexical' }))).toEqual([
        'notes/change.md',
      ]);
      await request(t.baseUrl)
        .put('/documents/notes/change.md')
        .set(as('both'))
        .send({ body: '# Change\n\nThe axolotl tank.' })
        .expect(200);
      await indexed();
      expect(await search(replica, { query: 'zebrafish', mode: 'lexical' })).toEqual([]);
      expect(ids(await search(replica, { query: 'axolotl' }))).toEqual(['notes/change.md']);

      await request(t.baseUrl).delete('/documents/notes/change.md').set(as('both')).expect(200);
      await waitFor(
        async () =>
          !ids(await search(replica, { query: 'axolotl' })).includes('notes/change.md') &&
          (await search(replica, { query: 'axolotl', mode: 'lexical' })).length === 0,
        'the deleted document to leave both sides',
      );
      await request(t.baseUrl)
        .post('/documents/notes/change.md/restore')
        .set(as('both'))
        .expect(200);
      await waitFor(
        async () => ids(await search(replica, { query: 'axolotl' })).includes('notes/change.md'),
        'the restored document to be found again',
      );
    });
  },
);

/**
 * The latent-semantic model with the lexical side in Qdrant: learnt from the records once 50
 * documents are held, every document's vector written into the collection under it, searched
 * in the same request as the lexical side by every server; a model learnt anew (the documents
 * doubled) is written beside the one searched and replaces it only once it is whole.
 */
describeWithQdrant('the lexical side in Qdrant', 'server')(
  'the semantic model with LEXICAL_STORE=qdrant',
  () => {
    jest.setTimeout(240_000);
    const url = testQdrantUrl()!;
    const collection = `kb_semantic_${randomBytes(4).toString('hex')}`;
    let a: TestApp;
    let b: TestApp;

    beforeAll(async () => {
      const env = {
        QDRANT_URL: url,
        ...(process.env.QDRANT_URL ? { QDRANT_API_KEY: process.env.QDRANT_API_KEY ?? '' } : {}),
        QDRANT_COLLECTION: collection,
        LEXICAL_STORE: 'qdrant',
      };
      a = await startTestApp({ ...env, VECTOR_SYNC_ENABLED: 'true' });
      b = await startTestApp({ ...env, VECTOR_SYNC_ENABLED: 'false' }, a.db);
    }, 120_000);
    afterAll(async () => {
      await b?.close();
      await a?.close();
      await deleteCollection(url, collection).catch(() => undefined);
    });

    const car = ['car', 'automobile'];
    /** Half the notes about cars ("automobile" and "car" keep company), half about gardens. */
    const notes = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, k) => {
        const i = from + k;
        const topic =
          i % 2 === 0
            ? `The ${car[i % 4 === 0 ? 0 : 1]} needs its engine checked, brakes, tyres and the ${car[(i >> 1) % 2]} battery in the garage.`
            : 'The garden needs watering, pruning of the roses, compost for the soil and seeds in spring.';
        return {
          op: 'create',
          document_id: `topics/note-${i}.md`,
          body: `# Note ${i}\n\n${topic}`,
        };
      });
    const model = async (app: TestApp) =>
      (await request(app.baseUrl).get('/admin/vectors/status').expect(200)).body.lexical
        .semantic_model as { documents: number; slot: string; building: unknown } | null;
    const vectorSearch = async (app: TestApp, query: string) =>
      (
        await request(app.baseUrl).get('/search').query({ query, mode: 'vector' }).expect(200)
      ).body.results.map((r: { document_id: string }) => r.document_id) as string[];

    it('finds a document in other words once the model is learnt, on every server, and replaces the model whole when the documents double', async () => {
      await request(a.baseUrl)
        .post('/documents/bulk')
        .send({ items: notes(0, 60) })
        .expect(200);
      // The target says "car", never "automobile".
      await request(a.baseUrl)
        .post('/documents')
        .send({
          document_id: 'topics/target.md',
          body: '# Winter\n\nBefore winter, take the car to the garage: engine, brakes and battery.',
        })
        .expect(201);
      const first = await waitFor(
        async () => {
          const found = await model(b);
          return found !== null && found.documents >= 50 && found.slot !== null ? found : undefined;
        },
        'the semantic model to be learnt and its vectors written',
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      for (const app of [a, b]) {
        await waitFor(
          async () => (await vectorSearch(app, 'automobile')).includes('topics/target.md'),
          'the target to be found by a word it does not say',
          60_000,
        );
        const found = await vectorSearch(app, 'automobile');
        // The garden notes share nothing with cars: none comes among the first ten.
        expect(found.filter((id) => /note-\d*[13579]\.md$/.test(id))).toEqual([]);
      }

      await request(a.baseUrl)
        .post('/documents/bulk')
        .send({ items: notes(60, 130) })
        .expect(200);
      const second = await waitFor(
        async () => {
          const found = await model(b);
          return found && found.slot !== first.slot && found.documents >= 120 ? found : undefined;
        },
        'a second model, learnt once the documents doubled, to be searched',
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      expect(second.building).toBeNull();
      expect(await vectorSearch(b, 'automobile')).toContain('topics/target.md');

      // Once a model was searched, no passage was written (only the warm-up before it
      // searches them): the later notes have their own points alone, with the model's vector.
      const later = notes(60, 130).map((note) => note.document_id);
      const sql = await a.db.client();
      try {
        await waitFor(
          async () =>
            (
              await sql.query(
                `SELECT count(*)::int AS n FROM kb_documents
                  WHERE document_id = ANY($1) AND vector_status NOT IN ('ready', 'skipped')`,
                [later],
              )
            ).rows[0].n === 0,
          'the later notes to go through the pipeline',
          60_000,
        );
      } finally {
        await sql.end();
      }
      const points = await qdrantRequest<{
        points: { payload: { kind: string }; vector: Record<string, unknown> }[];
      }>(url, 'POST', `/collections/${collection}/points/scroll`, {
        filter: { must: [{ key: 'document_id', match: { any: later } }] },
        limit: 1000,
        with_payload: ['kind'],
        with_vector: true,
      });
      expect(points.points).toHaveLength(later.length);
      for (const point of points.points) {
        expect(point.payload.kind).toBe('document');
        expect(Object.keys(point.vector)).toContain('lexical');
        expect(Object.keys(point.vector).some((name) => name.startsWith('semantic_'))).toBe(true);
      }
      const status = (await request(a.baseUrl).get('/admin/vectors/status').expect(200)).body;
      expect(status.store.collection.passage_vectors).toMatch(
        /^only until the first semantic model is searched/,
      );
    });
  },
);
