import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source-options';
import { PostgresVectorStore } from '../src/vectors/stores/postgres.vector-store';
import { QdrantVectorStore } from '../src/vectors/stores/qdrant/qdrant.vector-store';
import { decodeVector, folderOf } from '../src/vectors/stores/vector-payload';
import { ChunkPoint, VectorStore } from '../src/vectors/stores/vector-store.interface';
import { createTestDatabase, TestDatabase } from './support/database';
import { deleteCollection } from './support/qdrant-rest';
import { describeWithQdrant, testQdrantUrl } from './support/qdrant';

/** Unit vector from plain numbers (8 dimensions in these tests). */
function v(...values: number[]): Float32Array {
  const padded = [...values, ...Array(8 - values.length).fill(0)];
  const norm = Math.hypot(...padded);
  return Float32Array.from(padded.map((x) => x / norm));
}

function chunk(
  chunkIndex: number,
  vector: Float32Array,
  content = `chunk ${chunkIndex}`,
): ChunkPoint {
  return { chunkIndex, vector, heading: 'H', content };
}

interface StoreHarness {
  store: VectorStore;
  /** Makes the document exist where the store needs it (PostgreSQL: a kb_documents row). */
  addDocument(documentId: string): Promise<void>;
  cleanup(): Promise<void>;
}

/**
 * The behaviour every vector store must have. Runs against PostgreSQL, and against a real
 * Qdrant: the run's own node (test/support/qdrant.ts), or the server QDRANT_URL names.
 */
function contract(name: string, open: () => Promise<StoreHarness>, describeIt = describe) {
  describeIt(`${name} vector store contract`, () => {
    let h: StoreHarness;
    beforeEach(async () => {
      h = await open();
      // A store made empty now says so (every document to be indexed into it), or not.
      await h.store.init({ id: 'contract:v1', dimensions: 8 });
    });
    afterEach(() => h.cleanup());

    async function put(
      documentId: string,
      revision: number,
      chunks: ChunkPoint[],
      tags: string[] = [],
    ) {
      await h.addDocument(documentId);
      await h.store.replaceDocuments([{ documentId, revision, title: documentId, tags, chunks }]);
    }

    it('is idempotent at start', async () => {
      await expect(h.store.init({ id: 'contract:v1', dimensions: 8 })).resolves.toEqual({
        reset: false,
      });
      await expect(h.store.check()).resolves.toMatchObject({ ok: true });
    });

    it('returns the best chunk of each document, best first, with its cosine score and content', async () => {
      await put('k/a.md', 1, [chunk(0, v(1, 0)), chunk(1, v(1, 1), 'the best of a')]);
      await put('k/b.md', 1, [chunk(0, v(0, 1), 'only chunk of b')]);
      await put('k/c.md', 1, [chunk(0, v(0, 0, 1))]);
      const hits = await h.store.search(v(0, 1), { limit: 10 });
      expect(hits.map((x) => [x.documentId, x.chunkIndex])).toEqual([
        ['k/b.md', 0],
        ['k/a.md', 1],
        ['k/c.md', 0],
      ]);
      expect(hits[0].score).toBeCloseTo(1, 4);
      expect(hits[1].score).toBeCloseTo(Math.SQRT1_2, 4);
      expect(hits[2].score).toBeCloseTo(0, 4);
      expect(hits[1]).toMatchObject({ revision: 1, heading: 'H', content: 'the best of a' });
    });

    it('honours the limit', async () => {
      for (let i = 0; i < 6; i++) await put(`k/${i}.md`, 1, [chunk(0, v(1, i / 10))]);
      const hits = await h.store.search(v(1, 0), { limit: 3 });
      expect(hits.map((x) => x.documentId)).toEqual(['k/0.md', 'k/1.md', 'k/2.md']);
    });

    it('replacing a document leaves none of its old chunks', async () => {
      await put('k/doc.md', 1, [
        chunk(0, v(1)),
        chunk(1, v(0, 1)),
        chunk(2, v(0, 0, 1), 'old third'),
      ]);
      await put('k/doc.md', 2, [chunk(0, v(0, 0, 0, 1), 'new only')]);
      const hits = await h.store.search(v(0, 0, 1), { limit: 10 });
      expect(hits).toHaveLength(1);
      expect(hits[0]).toMatchObject({
        documentId: 'k/doc.md',
        chunkIndex: 0,
        revision: 2,
        content: 'new only',
      });
    });

    it('replaces several documents in one call, each keeping only its new chunks', async () => {
      await put('k/x.md', 1, [chunk(0, v(1)), chunk(1, v(1)), chunk(2, v(1))]);
      await put('k/y.md', 1, [chunk(0, v(0, 1))]);
      await h.addDocument('k/z.md');
      await h.store.replaceDocuments([
        {
          documentId: 'k/x.md',
          revision: 2,
          title: 'x',
          tags: ['t'],
          chunks: [chunk(0, v(0, 0, 1), 'x2')],
        },
        {
          documentId: 'k/y.md',
          revision: 5,
          title: 'y',
          tags: [],
          chunks: [chunk(0, v(0, 1)), chunk(1, v(1), 'y2b')],
        },
        { documentId: 'k/z.md', revision: 1, title: 'z', tags: ['t'], chunks: [chunk(0, v(1, 1))] },
      ]);
      const hits = await h.store.search(v(1), { limit: 10 });
      expect(hits.map((x) => [x.documentId, x.chunkIndex, x.revision])).toEqual([
        ['k/y.md', 1, 5],
        ['k/z.md', 0, 1],
        ['k/x.md', 0, 2],
      ]);
      expect(hits[2].score).toBeCloseTo(0, 4);
      const tagged = await h.store.search(v(1), { limit: 10, tags: ['t'] });
      expect(tagged.map((x) => x.documentId).sort()).toEqual(['k/x.md', 'k/z.md']);
    });

    it('writes and replaces a document of more than a thousand chunks, vectors intact', async () => {
      // Chunk i points its own way: two angles on a 40 × 40 grid of a quarter sphere.
      const direction = (i: number) => {
        const a = ((i % 40) * Math.PI) / 80;
        const b = (Math.floor(i / 40) * Math.PI) / 80;
        return v(Math.cos(a) * Math.cos(b), Math.sin(a) * Math.cos(b), Math.sin(b));
      };
      const chunks = (count: number) =>
        Array.from({ length: count }, (_, i) => chunk(i, direction(i)));
      await put('k/big.md', 1, chunks(1300));
      // Neighbours on the grid are 2.25° apart (cosine 0.9992), closer than the index's
      // approximate scores tell apart: the chunk found is 1234 or one of its neighbours,
      // scored exactly from its stored vector.
      const [hit] = await h.store.search(direction(1234), { limit: 1 });
      expect(hit).toMatchObject({ documentId: 'k/big.md', content: `chunk ${hit.chunkIndex}` });
      expect([1193, 1194, 1195, 1233, 1234, 1235, 1273, 1274, 1275]).toContain(hit.chunkIndex);
      expect(hit.score).toBeGreaterThan(0.998);
      const cosine = (i: number) =>
        direction(i).reduce((sum, x, d) => sum + x * direction(1234)[d], 0);
      expect(hit.score).toBeCloseTo(cosine(hit.chunkIndex), 5);

      await put('k/big.md', 2, chunks(700));
      const [after] = await h.store.search(direction(1234), { limit: 1 });
      expect(after.revision).toBe(2);
      expect(after.chunkIndex).toBeLessThan(700);
      expect(after.score).toBeLessThan(0.999);
      const [kept] = await h.store.search(direction(699), { limit: 1 });
      expect(kept.content).toBe(`chunk ${kept.chunkIndex}`);
      // 699 or one of its neighbours below 700.
      expect([658, 659, 660, 698, 699]).toContain(kept.chunkIndex);
    });

    it('deletes every point of a document, and deleting twice is harmless', async () => {
      await put('k/gone.md', 1, [chunk(0, v(1)), chunk(1, v(1, 1))]);
      await put('k/stays.md', 1, [chunk(0, v(0, 1))]);
      await h.store.deleteDocuments(['k/gone.md', 'k/never-there.md']);
      await h.store.deleteDocuments(['k/gone.md']);
      const hits = await h.store.search(v(1), { limit: 10 });
      expect(hits.map((x) => x.documentId)).toEqual(['k/stays.md']);
    });

    it('filters by folder on whole path segments', async () => {
      await put('kb/reports/q1.md', 1, [chunk(0, v(1))]);
      await put('kb/reports/2024/q2.md', 1, [chunk(0, v(1))]);
      await put('kb/reportsX/q3.md', 1, [chunk(0, v(1))]);
      await put('other/q4.md', 1, [chunk(0, v(1))]);
      const ids = async (prefix: string) =>
        (await h.store.search(v(1), { limit: 10, folder: folderOf(prefix) }))
          .map((x) => x.documentId)
          .sort();
      expect(await ids('kb/reports')).toEqual(['kb/reports/2024/q2.md', 'kb/reports/q1.md']);
      expect(await ids('kb/reports/')).toEqual(['kb/reports/2024/q2.md', 'kb/reports/q1.md']);
      expect(await ids('kb')).toEqual([
        'kb/reports/2024/q2.md',
        'kb/reports/q1.md',
        'kb/reportsX/q3.md',
      ]);
      expect(await ids('kb/reports/q1.md')).toEqual(['kb/reports/q1.md']);
      expect(await ids('kb/rep')).toEqual([]);
    });

    it('filters by tags, every tag required', async () => {
      await put('t/a.md', 1, [chunk(0, v(1))], ['ops', 'guide']);
      await put('t/b.md', 1, [chunk(0, v(1))], ['ops']);
      await put('t/c.md', 1, [chunk(0, v(1))], []);
      const ids = async (tags: string[]) =>
        (await h.store.search(v(1), { limit: 10, tags })).map((x) => x.documentId).sort();
      expect(await ids(['ops'])).toEqual(['t/a.md', 't/b.md']);
      expect(await ids(['ops', 'guide'])).toEqual(['t/a.md']);
      expect(await ids(['missing'])).toEqual([]);
      const both = await h.store.search(v(1), { limit: 10, tags: ['guide'], folder: 't/' });
      expect(both.map((x) => x.documentId)).toEqual(['t/a.md']);
    });
  });
}

contract('postgres', async () => {
  const db = await createTestDatabase();
  const dataSource = await new DataSource(dataSourceOptions(db.url, 4)).initialize();
  const store = new PostgresVectorStore(dataSource);
  return {
    store,
    async addDocument(documentId) {
      await dataSource.query(
        `INSERT INTO kb_documents (document_id, body, content_hash) VALUES ($1, 'x', 'h')
         ON CONFLICT DO NOTHING`,
        [documentId],
      );
    },
    async cleanup() {
      await store.close();
      await dataSource.destroy();
      await db.drop();
    },
  };
});

const qdrantUrl = testQdrantUrl();
contract(
  'qdrant',
  async () => {
    const collection = `contract_${randomBytes(4).toString('hex')}`;
    const store = QdrantVectorStore.open({
      url: qdrantUrl!,
      apiKey: process.env.QDRANT_URL ? process.env.QDRANT_API_KEY : undefined,
      collection,
      checkCompatibility: false,
    });
    return {
      store,
      addDocument: () => Promise.resolve(),
      cleanup: () => deleteCollection(qdrantUrl!, collection),
    };
  },
  describeWithQdrant('the Qdrant vector store contract', 'server'),
);

describe('postgres vector store specifics', () => {
  let db: TestDatabase;
  let one: DataSource;
  let two: DataSource;
  let a: PostgresVectorStore;
  let b: PostgresVectorStore;
  let sql: Client;

  beforeEach(async () => {
    db = await createTestDatabase();
    one = await new DataSource(dataSourceOptions(db.url, 4)).initialize();
    two = await new DataSource(dataSourceOptions(db.url, 4)).initialize();
    a = new PostgresVectorStore(one);
    b = new PostgresVectorStore(two);
    await a.init({ id: 'contract:v1', dimensions: 8 });
    await b.init({ id: 'contract:v1', dimensions: 8 });
    sql = await db.client();
    await sql.query(
      `INSERT INTO kb_documents (document_id, body, content_hash)
       SELECT 'p/' || i || '.md', 'x', 'h' FROM generate_series(0, 9) AS i`,
    );
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await one.destroy();
    await two.destroy();
    await db.drop();
  });

  // A new content means a new revision (the reader skips documents it holds at a revision).
  const put = (store: PostgresVectorStore, id: string, vector: Float32Array, revision = 1) =>
    store.replaceDocuments([
      { documentId: id, revision, title: id, tags: [], chunks: [chunk(0, vector)] },
    ]);

  // b.refresh() reads the change log now; a search does it only every 100 ms.
  const searchB = async (vector: Float32Array) => {
    await b.refresh();
    return b.search(vector, { limit: 5 });
  };

  it('keeps every server current: writes and deletes made through one are searched by the other', async () => {
    await expect(searchB(v(1))).resolves.toEqual([]);
    await put(a, 'p/1.md', v(1));
    await put(a, 'p/2.md', v(1, 1));
    expect((await searchB(v(1))).map((x) => x.documentId)).toEqual(['p/1.md', 'p/2.md']);
    await a.deleteDocuments(['p/1.md']);
    await put(a, 'p/2.md', v(0, 1), 2);
    const after = await searchB(v(1));
    expect(after.map((x) => x.documentId)).toEqual(['p/2.md']);
    expect(after[0].score).toBeCloseTo(0, 5);
  });

  it('stores every vector of a large batch exactly: another server reads them back from the table', async () => {
    // 1300 chunks: written in several statements, each with its vectors as one binary parameter.
    const vectors = Array.from({ length: 1300 }, (_, i) =>
      v(Math.cos(i), Math.sin(i), Math.cos(i / 7), Math.sin(i / 7), i / 1300),
    );
    await a.replaceDocuments([
      {
        documentId: 'p/3.md',
        revision: 1,
        title: 'big',
        tags: [],
        chunks: vectors.map((vector, i) => chunk(i, vector)),
      },
    ]);
    const { rows } = await sql.query<{ chunk_index: number; embedding: Buffer }>(
      `SELECT chunk_index, embedding FROM kb_chunk_vectors WHERE document_id = 'p/3.md' ORDER BY chunk_index`,
    );
    expect(rows).toHaveLength(1300);
    for (const { chunk_index, embedding } of rows) {
      expect(Array.from(decodeVector(embedding))).toEqual(Array.from(vectors[chunk_index]));
    }
    const [hit] = await searchB(vectors[977]);
    expect(hit).toMatchObject({ documentId: 'p/3.md', chunkIndex: 977 });
  });

  it('reads in full only the documents it does not already hold at their revision', async () => {
    // What b reads of the table's vectors for its index (not the exact rescoring of a search).
    const reads: string[] = [];
    const query = two.query.bind(two);
    jest.spyOn(two, 'query').mockImplementation((text: string, values?: unknown) => {
      if (/^SELECT document_id, chunk_index, revision, tags, ancestors, embedding/.test(text)) {
        reads.push(String((values as unknown[][] | undefined)?.[0] ?? 'all'));
      }
      return query(text, values as unknown[]);
    });
    await searchB(v(1)); // loaded
    reads.length = 0;
    await put(a, 'p/7.md', v(1), 3);
    expect((await searchB(v(1)))[0]).toMatchObject({ documentId: 'p/7.md', score: 1 });
    expect(reads).toEqual(['p/7.md']);
    // Same revision written again (only a re-index does that, with the same vectors): b keeps
    // what it holds without reading it.
    reads.length = 0;
    await put(a, 'p/7.md', v(0, 1), 3);
    await searchB(v(1));
    expect(reads).toEqual([]);
    await put(a, 'p/7.md', v(0, 1), 4);
    expect((await searchB(v(0, 1)))[0]).toMatchObject({ documentId: 'p/7.md', score: 1 });
    expect(reads).toEqual(['p/7.md']);
  });

  it("searches its own writes at once, and another server's after at most 100 ms", async () => {
    await a.search(v(1), { limit: 5 });
    await b.search(v(1), { limit: 5 });
    await put(a, 'p/9.md', v(1));
    expect((await a.search(v(1), { limit: 5 })).map((x) => x.documentId)).toEqual(['p/9.md']);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect((await b.search(v(1), { limit: 5 })).map((x) => x.documentId)).toEqual(['p/9.md']);
  });

  it('sees a write from a transaction that commits after a later one was read', async () => {
    await searchB(v(1)); // loaded
    // T1 writes first but commits last: its change-log id is lower than T2's.
    const slow = await db.client();
    await slow.query('BEGIN');
    await slow.query(
      `INSERT INTO kb_chunk_vectors (document_id, chunk_index, revision, title, tags, ancestors, heading, content, embedding)
       VALUES ('p/3.md', 0, 1, 't', '{}', '{p/}', '', 'slow', $1)`,
      [Buffer.from(v(1).buffer)],
    );
    await put(a, 'p/4.md', v(0, 1));
    expect((await searchB(v(0, 1))).map((x) => x.documentId)).toEqual(['p/4.md']);
    await slow.query('COMMIT');
    const hits = await searchB(v(1));
    expect(hits.map((x) => x.documentId)).toContain('p/3.md');
  });

  it('reloads everything when the change log was pruned past what it read', async () => {
    await put(a, 'p/5.md', v(1));
    expect(await searchB(v(1))).toHaveLength(1);
    await put(a, 'p/6.md', v(1));
    await sql.query(`DELETE FROM kb_chunk_vector_changes`);
    await sql.query(`UPDATE kb_chunk_vector_meta SET pruned_through = 1000000`);
    expect((await searchB(v(1))).map((x) => x.documentId).sort()).toEqual(['p/5.md', 'p/6.md']);
  });

  it('drops vectors of another embedder at start and says so, so that everything is re-embedded', async () => {
    await put(a, 'p/7.md', v(1));
    const c = new PostgresVectorStore(one);
    await expect(c.init({ id: 'other:model', dimensions: 4 })).resolves.toEqual({
      reset: 'the embedder changed',
    });
    await c.close();
    const rows = await sql.query(`SELECT count(*)::int AS n FROM kb_chunk_vectors`);
    expect(rows.rows[0].n).toBe(0);
    const meta = await sql.query(
      `SELECT embedder, dimensions, generation FROM kb_chunk_vector_meta`,
    );
    expect(meta.rows[0]).toEqual({ embedder: 'other:model', dimensions: 4, generation: 2 });
  });

  it('logs one change per document and statement, cascaded deletes included', async () => {
    await sql.query(`DELETE FROM kb_chunk_vector_changes`);
    await a.replaceDocuments([
      {
        documentId: 'p/8.md',
        revision: 1,
        title: 't',
        tags: [],
        chunks: [chunk(0, v(1)), chunk(1, v(1)), chunk(2, v(1))],
      },
    ]);
    await sql.query(`DELETE FROM kb_documents WHERE document_id = 'p/8.md'`);
    const log = await sql.query(`SELECT document_id FROM kb_chunk_vector_changes ORDER BY id`);
    expect(log.rows.map((r) => r.document_id)).toEqual(['p/8.md', 'p/8.md']);
    expect((await sql.query(`SELECT count(*)::int AS n FROM kb_chunk_vectors`)).rows[0].n).toBe(0);
  });
});
