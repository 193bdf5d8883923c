import { randomBytes } from 'node:crypto';
import type { Client } from 'pg';
import request from 'supertest';
import { Access } from '../src/documents/access';
import { dfOf, lexicalCoverage, TermTable } from '../src/vectors/search/term-table';
import { SEARCH_SIDES, type SearchSides } from '../src/vectors/search/search-sides';
import { startTestApp, TestApp } from './support/app';
import { deleteCollection } from './support/qdrant-rest';
import { describeWithQdrant, testQdrantUrl } from './support/qdrant';
import { waitFor } from './support/wait';

const KEY = 'coverage-key-0123456789abcdef0';
const as = { 'X-API-Key': KEY };
/** More than the latent-semantic model's minimum: the term table is counted from 50. */
const DOCUMENTS = 60;

/**
 * The fusion's lexical coverage (docs/search.md, "Fusion") is the same in both lexical stores:
 * the same documents, in one PostgreSQL, searched by a server with the index in its memory
 * (LEXICAL_STORE=local) and by one with it in Qdrant (LEXICAL_STORE=qdrant, the first hit's
 * terms read from its sparse vector in the search's own batch request) give the same first
 * document, the same query terms held by it, the same term table and so the same coverage.
 */
describeWithQdrant('the lexical coverage in both stores', 'server')(
  'lexical coverage with LEXICAL_STORE=local and =qdrant',
  () => {
    jest.setTimeout(240_000);
    const url = testQdrantUrl()!;
    const collection = `kb_coverage_${randomBytes(4).toString('hex')}`;
    let writer: TestApp;
    let qdrant: TestApp;
    let local: TestApp;
    let sql: Client;

    const env = {
      API_KEYS: `tester:${KEY}:admin`,
      RATE_LIMIT_ADMIN_WRITES: 'off',
      QDRANT_URL: url,
      ...(process.env.QDRANT_URL ? { QDRANT_API_KEY: process.env.QDRANT_API_KEY ?? '' } : {}),
      QDRANT_COLLECTION: collection,
      VECTOR_RETRY_BASE_MS: '50',
    };

    beforeAll(async () => {
      writer = await startTestApp({ ...env, LEXICAL_STORE: 'qdrant', VECTOR_SYNC_ENABLED: 'true' });
      sql = await writer.db.client();
      // Every document says `guide`; a few say the rarer words the queries ask for.
      for (let i = 0; i < DOCUMENTS; i++) {
        const topic =
          i === 0
            ? 'Take a nightly pg_dump of the database and keep it offsite.'
            : i === 1
              ? 'Restore a pg_dump with pg_restore into an empty database.'
              : i % 3 === 0
                ? `Topic ${i}: the database grows, vacuum it weekly.`
                : `Topic ${i}: notes on chapter ${i} of the handbook.`;
        await request(writer.baseUrl)
          .post('/documents')
          .set(as)
          .send({ document_id: `guide/${i}.md`, body: `# Guide ${i}\n\nThis guide: ${topic}` })
          .expect(201);
      }
      await waitFor(
        async () => {
          const { rows } = await sql.query(
            `SELECT count(*)::int AS n FROM kb_documents
              WHERE deleted_at IS NULL AND vector_status NOT IN ('ready', 'skipped')`,
          );
          return rows[0].n === 0;
        },
        'every document to be indexed',
        { timeoutMs: 120_000, intervalMs: 100 },
      );
      // Two servers started on the records as they are now, so that each counts its term
      // table from all of them: one searching Qdrant, one its own in-memory index.
      qdrant = await startTestApp(
        { ...env, LEXICAL_STORE: 'qdrant', VECTOR_SYNC_ENABLED: 'false' },
        writer.db,
      );
      local = await startTestApp({ ...env, VECTOR_SYNC_ENABLED: 'false' }, writer.db);
    }, 200_000);
    afterAll(async () => {
      await local?.close();
      await qdrant?.close();
      await sql?.end();
      await writer?.close();
      await deleteCollection(url, collection).catch(() => undefined);
    });

    const tableOf = (app: TestApp) =>
      waitFor(
        () => {
          const table = app.app.get(TermTable, { strict: false }).current;
          return table?.documents === DOCUMENTS && table;
        },
        'the term table to be counted',
        { timeoutMs: 30_000, intervalMs: 100 },
      );
    const lexicalOf = async (app: TestApp, query: string) => {
      const sides = app.app.get<symbol, SearchSides>(SEARCH_SIDES, { strict: false });
      const { lexical } = await sides.both({
        query,
        limit: 20,
        scope: {},
        access: Access.EVERYTHING,
      });
      return lexical;
    };

    it('gives the same first document, terms held and coverage with either store', async () => {
      const [fromQdrant, fromLocal] = [await tableOf(qdrant), await tableOf(local)];
      expect(fromLocal.ids).toEqual(fromQdrant.ids);
      expect(fromLocal.df).toEqual(fromQdrant.df);
      expect(dfOf(fromLocal, 'guid')).toBe(DOCUMENTS);

      const queries = [
        'nightly pg_dump guide',
        // The first document holds the common word only: the rare one is in no document.
        'guide zebracorn',
        'restore the database',
        'offsite database copy',
      ];
      const coverage = new Map<string, number>();
      let ahead = 0;
      for (const query of queries) {
        const [q, l] = [await lexicalOf(qdrant, query), await lexicalOf(local, query)];
        // Documents tied on the score (every one says `guide` once) come in either store's
        // order; a first document ahead of the rest is the same in both.
        if (l.hits[0].score > l.hits[1].score) {
          ahead++;
          expect(q.hits[0].documentId).toBe(l.hits[0].documentId);
        }
        expect(q.first?.terms).toEqual(l.first?.terms);
        expect([...q.first!.held].sort()).toEqual([...l.first!.held].sort());
        const covered = lexicalCoverage(fromQdrant, q.first!);
        expect(lexicalCoverage(fromLocal, l.first!)).toBeCloseTo(covered, 12);
        coverage.set(query, covered);
      }
      expect(ahead).toBeGreaterThanOrEqual(3);
      // The two ends the fusion reads: a first document holding the query's rare words (the
      // weight moves towards the lexical side), and one holding only its common word (towards
      // the vector side).
      expect(coverage.get('nightly pg_dump guide')).toBeGreaterThan(0.5);
      expect(coverage.get('guide zebracorn')).toBeGreaterThan(0);
      expect(coverage.get('guide zebracorn')).toBeLessThan(0.1);
    });

    it('says in the status what term table each server counted, in either store', async () => {
      for (const app of [qdrant, local]) {
        const table = await tableOf(app);
        const { body } = await request(app.baseUrl)
          .get('/admin/vectors/status')
          .set(as)
          .expect(200);
        expect(body.lexical.term_frequencies).toEqual({
          documents: DOCUMENTS,
          terms: table.ids.length,
          counted_at: expect.any(String),
        });
        expect(Date.parse(body.lexical.term_frequencies.counted_at)).not.toBeNaN();
      }
    });
  },
);
