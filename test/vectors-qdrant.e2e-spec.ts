import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { QdrantVectorStore } from '../src/vectors/stores/qdrant/qdrant.vector-store';
import { SEMANTIC_DIMENSIONS } from '../src/vectors/semantic/semantic-training';
import { documentPointId } from '../src/vectors/stores/qdrant/qdrant-lexical.index';
import { pointId } from '../src/vectors/stores/vector-payload';
import { ChunkPoint, StoreReady } from '../src/vectors/stores/vector-store.interface';
import { createCollection, deleteCollection, qdrantRequest } from './support/qdrant-rest';
import { describeWithQdrant, QdrantNode, testQdrantUrl } from './support/qdrant';

/**
 * What the Qdrant store does with a real Qdrant server beyond the contract every store keeps
 * (vector-stores.e2e-spec.ts): the collection it makes or finds, the points it writes, the
 * filters and failures it sends. The run's shared node (or QDRANT_URL's server), each test on
 * collections of its own; then a node of this file's own that asks for an API key and takes
 * requests of 1 MB at most.
 */

/** Unit vector from plain numbers (8 dimensions in these tests). */
function v(...values: number[]): Float32Array {
  const padded = [...values, ...Array(8 - values.length).fill(0)];
  const norm = Math.hypot(...padded);
  return Float32Array.from(padded.map((x) => x / norm));
}

const chunk = (chunkIndex: number, vector: Float32Array, content = `chunk ${chunkIndex}`) =>
  ({ chunkIndex, vector, heading: 'H', content }) satisfies ChunkPoint;
const EMBEDDER = { id: 'local:test', dimensions: 8 };
const newName = () => `store_${randomBytes(4).toString('hex')}`;

interface CollectionInfo {
  config: {
    params: { vectors: unknown; shard_number: number };
    optimizer_config: { default_segment_number: number };
    hnsw_config: { m: number };
  };
  payload_schema: Record<string, { data_type: string }>;
  points_count: number;
}

describeWithQdrant('the Qdrant store on a real server', 'server')(
  'the Qdrant store on a real server',
  () => {
    const url = testQdrantUrl()!;
    let made: string[] = [];
    const store = (
      collection: string,
      settings?: { passageGraph: boolean },
      layout?: 'vectors' | 'shared',
    ) =>
      QdrantVectorStore.open({
        url,
        apiKey: process.env.QDRANT_URL ? process.env.QDRANT_API_KEY : undefined,
        collection,
        checkCompatibility: false,
        settings,
        layout,
      });
    /** A collection name this test owns: deleted after it, whoever creates it. */
    const collection = () => {
      const name = newName();
      made.push(name);
      return name;
    };
    const info = (name: string) =>
      qdrantRequest<CollectionInfo>(url, 'GET', `/collections/${name}`);
    afterEach(async () => {
      await Promise.all(made.map((name) => deleteCollection(url, name)));
      made = [];
    });

    it('creates a missing collection (cosine, the embedder size) with keyword indexes on the filtered fields, and says it is new', async () => {
      const name = collection();
      // Every document is to be embedded into a collection made now.
      await expect(store(name).init(EMBEDDER)).resolves.toEqual({
        reset: `the Qdrant collection "${name}" is new`,
      });
      const created = await info(name);
      expect(created.config.params.vectors).toEqual({ size: 8, distance: 'Cosine' });
      expect(created.config.optimizer_config.default_segment_number).toBe(8);
      expect(created.payload_schema).toEqual({
        document_id: expect.objectContaining({ data_type: 'keyword' }),
        ancestors: expect.objectContaining({ data_type: 'keyword' }),
        tags: expect.objectContaining({ data_type: 'keyword' }),
        kind: expect.objectContaining({ data_type: 'keyword' }),
      });
      await expect(store(name).init(EMBEDDER)).resolves.toEqual({ reset: false });
    });

    it('starts several servers at once on one new collection: each finds the one another made', async () => {
      const name = collection();
      const starts = await Promise.allSettled(
        Array.from({ length: 4 }, () => store(name).init(EMBEDDER)),
      );
      // One made it (and says so); the others found it.
      expect(starts.every((start) => start.status === 'fulfilled')).toBe(true);
      const resets = starts.map(
        (start) => (start as PromiseFulfilledResult<{ reset: unknown }>).value.reset,
      );
      expect(resets.filter((reset) => reset !== false)).toEqual([
        `the Qdrant collection "${name}" is new`,
      ]);
      expect(Object.keys((await info(name)).payload_schema).sort()).toEqual([
        'ancestors',
        'document_id',
        'kind',
        'tags',
      ]);
    });

    it('uses an existing collection as it is, with its points, adding only the indexes it lacks', async () => {
      const name = collection();
      await createCollection(url, name, { dimensions: 8, shards: 2 });
      await qdrantRequest(url, 'PUT', `/collections/${name}/index?wait=true`, {
        field_name: 'tags',
        field_schema: 'keyword',
      });
      await store(name).replaceDocuments([
        { documentId: 'kept/a.md', revision: 1, title: 'A', tags: ['t'], chunks: [chunk(0, v(1))] },
      ]);

      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      try {
        await store(name).init(EMBEDDER);
        // Each difference from what this server would have made is said, and left as it is.
        const said = warn.mock.calls.map(([message]) => String(message));
        expect(said).toEqual(
          expect.arrayContaining([
            expect.stringMatching(new RegExp(`"${name}" has 2 where QDRANT_SHARDS says 1`)),
            expect.stringMatching(
              new RegExp(`"${name}" has 0 \\(Qdrant's own choice\\) where QDRANT_SEGMENTS says 8`),
            ),
          ]),
        );
      } finally {
        warn.mockRestore();
      }
      const after = await info(name);
      expect(after.config.params.shard_number).toBe(2);
      expect(after.config.optimizer_config.default_segment_number).toBe(0);
      expect(after.points_count).toBe(1);
      expect(Object.keys(after.payload_schema).sort()).toEqual([
        'ancestors',
        'document_id',
        'kind',
        'tags',
      ]);
      const [hit] = await store(name).search(v(1), { limit: 1, tags: ['t'] });
      expect(hit).toMatchObject({ documentId: 'kept/a.md', chunkIndex: 0 });
    });

    it("makes the passages' vectors without a search graph when the latent-semantic model ranks, and still finds them", async () => {
      const name = collection();
      const s = store(name, { passageGraph: false });
      await s.init(EMBEDDER);
      expect((await info(name)).config.params.vectors).toEqual({
        size: 8,
        distance: 'Cosine',
        hnsw_config: { m: 0, payload_m: 0 },
      });
      await expect(s.report()).resolves.toMatchObject({ name, passage_graph: false });
      await s.replaceDocuments([
        { documentId: 'a.md', revision: 1, title: 'A', tags: [], chunks: [chunk(0, v(1, 0))] },
        { documentId: 'b.md', revision: 1, title: 'B', tags: [], chunks: [chunk(0, v(0, 1))] },
      ]);
      // Searched exactly: a knowledge base this small has no model yet, and needs no graph.
      const hits = await s.search(v(0, 1), { limit: 2 });
      expect(hits.map((hit) => hit.documentId)).toEqual(['b.md', 'a.md']);
    });

    it("gives an existing collection's passages the graph when they are searched, and leaves one that is not needed", async () => {
      const name = collection();
      await store(name, { passageGraph: false }).init(EMBEDDER);
      await store(name).replaceDocuments([
        { documentId: 'kept.md', revision: 1, title: 'K', tags: [], chunks: [chunk(0, v(1))] },
      ]);
      const said = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
      try {
        // A server whose vector side searches the passages turns the graph on.
        await store(name).init(EMBEDDER);
        expect((await info(name)).config.params.vectors).toMatchObject({
          hnsw_config: { m: 16, payload_m: 16 },
        });
        expect(said.mock.calls.map(([m]) => String(m))).toContainEqual(
          expect.stringContaining(`"${name}" had no search graph over the passages' vectors`),
        );
        // One whose vector side does not leaves it, and says how to drop it.
        said.mockClear();
        await store(name, { passageGraph: false }).init(EMBEDDER);
        expect((await info(name)).config.params.vectors).toMatchObject({
          hnsw_config: { m: 16, payload_m: 16 },
        });
        expect(said.mock.calls.map(([m]) => String(m))).toContainEqual(
          expect.stringContaining(`"${name}" keeps a search graph over the passages' vectors`),
        );
      } finally {
        said.mockRestore();
      }
      expect((await info(name)).points_count).toBe(1);
    });

    it('writes the passages only while they are the vector side, and has them written again for a server that searches them', async () => {
      const name = collection();
      const lsa = store(name, { passageGraph: false }, 'shared');
      await lsa.init(EMBEDDER);
      // As the latent-semantic model's server says: no model searched yet, then one.
      let warmUp = true;
      lsa.writePassagesWhile(() => Promise.resolve(warmUp));
      const doc = (id: string, ...chunks: ChunkPoint[]) => ({
        documentId: id,
        revision: 1,
        title: id,
        tags: [],
        chunks,
      });
      /** The points of a document: their ids and the names of their vectors. */
      const pointsOf = async (documentId: string) =>
        new Map(
          (
            await qdrantRequest<{ points: { id: string; vector: Record<string, unknown> }[] }>(
              url,
              'POST',
              `/collections/${name}/points/scroll`,
              {
                filter: { must: [{ key: 'document_id', match: { value: documentId } }] },
                with_vector: true,
              },
            )
          ).points.map((p) => [p.id, Object.keys(p.vector)]),
        );
      /** A document's own point, as the lexical side writes it under a semantic model. */
      const documentPoint = (documentId: string) =>
        qdrantRequest(url, 'PUT', `/collections/${name}/points?wait=true`, {
          points: [
            {
              id: documentPointId(documentId),
              vector: { semantic_a: Array(SEMANTIC_DIMENSIONS).fill(0.1) },
              payload: {
                document_id: documentId,
                kind: 'document',
                revision: 1,
                tags: [],
                ancestors: [],
              },
            },
          ],
        });
      await lsa.replaceDocuments([doc('early.md', chunk(0, v(1, 0)), chunk(1, v(1, 1)))]);
      warmUp = false;
      await lsa.replaceDocuments([doc('late.md', chunk(0, v(0, 1)))]);
      await documentPoint('early.md');
      await documentPoint('late.md');
      expect(await pointsOf('early.md')).toEqual(
        new Map([
          [pointId('early.md', 0), ['dense']],
          [pointId('early.md', 1), ['dense']],
          [documentPointId('early.md'), ['semantic_a']],
        ]),
      );
      // No passage is written once a model is searched (nothing would read it); the
      // document's own point stays.
      expect(await pointsOf('late.md')).toEqual(
        new Map([[documentPointId('late.md'), ['semantic_a']]]),
      );
      // A document written again then loses the passages of its earlier revisions.
      await lsa.replaceDocuments([{ ...doc('early.md', chunk(0, v(1, 0))), revision: 2 }]);
      expect(await pointsOf('early.md')).toEqual(
        new Map([[documentPointId('early.md'), ['semantic_a']]]),
      );
      await expect(lsa.report()).resolves.toMatchObject({
        passage_graph: false,
        passage_vectors: expect.stringMatching(/^only until the first semantic model is searched/),
      });
      // A predicate that cannot answer (its database down) leaves the passages in.
      lsa.writePassagesWhile(() => Promise.reject(new Error('database down')));
      await lsa.replaceDocuments([{ ...doc('late.md', chunk(0, v(0, 1))), revision: 2 }]);
      expect(await pointsOf('late.md')).toEqual(
        new Map([
          [pointId('late.md', 0), ['dense']],
          [documentPointId('late.md'), ['semantic_a']],
        ]),
      );

      // A server whose vector side is the passages (an embedding model) finds the documents
      // written under a semantic model and has every document embedded again, and its status
      // says so; once they are queued, the marks go, and first the models they were of (a
      // server of such a model coming back learns one and writes every vector again).
      const forgotten: string[] = [];
      const passages = QdrantVectorStore.open({
        url,
        apiKey: process.env.QDRANT_URL ? process.env.QDRANT_API_KEY : undefined,
        collection: name,
        checkCompatibility: false,
        settings: { passageGraph: true },
        layout: 'shared',
        forgetSemanticModels: async () => {
          const early = await pointsOf('early.md');
          forgotten.push(`models, then ${early.get(documentPointId('early.md'))!.join()}`);
        },
      });
      const said = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
      let started: StoreReady;
      try {
        started = await passages.init(EMBEDDER);
      } finally {
        said.mockRestore();
      }
      expect(started).toEqual({
        reset: `the Qdrant collection "${name}" holds 2 documents written while a latent-semantic model was the vector side (their passages without vectors), and this server's vector side searches the passages`,
        afterReset: expect.any(Function),
      });
      await expect(passages.report()).resolves.toMatchObject({
        passage_vectors:
          "every passage's: 2 documents found without them at start, queued to be embedded again",
      });
      expect(forgotten).toEqual([]);
      await started.afterReset!();
      expect(forgotten).toEqual(['models, then semantic_a']);
      expect(await pointsOf('early.md')).toEqual(new Map([[documentPointId('early.md'), []]]));
      // Written again (as the pipeline does), it is found by its vector, and the next start is quiet.
      await passages.replaceDocuments([{ ...doc('early.md', chunk(0, v(1, 0))), revision: 4 }]);
      const [hit] = await passages.search(v(1, 0), { limit: 1 });
      expect(hit).toMatchObject({ documentId: 'early.md', revision: 4 });
      const again = store(name, { passageGraph: true }, 'shared');
      await expect(again.init(EMBEDDER)).resolves.toEqual({ reset: false });
      await expect(again.report()).resolves.toMatchObject({ passage_vectors: "every passage's" });
    });

    it('refuses a collection of another vector size, saying what to do, and leaves it as it was', async () => {
      const name = collection();
      await createCollection(url, name, { dimensions: 16 });
      await qdrantRequest(url, 'PUT', `/collections/${name}/points?wait=true`, {
        points: [{ id: 1, vector: Array(16).fill(0.25) }],
      });
      await expect(store(name).init(EMBEDDER)).rejects.toThrow(
        new RegExp(
          `collection "${name}" holds 16-dimensional Cosine passage vectors, but the embedder \\(local:test\\) makes 8-dimensional ones.*QDRANT_COLLECTION`,
        ),
      );
      const after = await info(name);
      expect(after.config.params.vectors).toEqual({ size: 16, distance: 'Cosine' });
      expect(after.points_count).toBe(1);
      expect(after.payload_schema).toEqual({});
    });

    it('stores one point per chunk under an id made of the document id and chunk index, with the payload', async () => {
      const name = collection();
      const s = store(name);
      await s.init(EMBEDDER);
      await s.replaceDocuments([
        {
          documentId: 'kb/guides/setup.md',
          revision: 7,
          title: 'Setup',
          tags: ['ops', 'guide'],
          chunks: [
            { chunkIndex: 0, vector: v(1), heading: 'Setup', content: 'first' },
            { chunkIndex: 1, vector: v(0, 1), heading: 'Setup › Run', content: 'second' },
          ],
        },
      ]);
      const points = await qdrantRequest<
        { id: string; vector: number[]; payload: Record<string, unknown> }[]
      >(url, 'POST', `/collections/${name}/points`, {
        ids: [pointId('kb/guides/setup.md', 0), pointId('kb/guides/setup.md', 1)],
        with_payload: true,
        with_vector: true,
      });
      const byId = new Map(points.map((p) => [p.id, p]));
      const payload = {
        document_id: 'kb/guides/setup.md',
        kind: 'chunk',
        revision: 7,
        title: 'Setup',
        tags: ['ops', 'guide'],
        ancestors: ['kb/', 'kb/guides/', 'kb/guides/setup.md/'],
      };
      expect(byId.get(pointId('kb/guides/setup.md', 0))).toEqual({
        id: pointId('kb/guides/setup.md', 0),
        vector: Array.from(v(1)),
        payload: { ...payload, chunk_index: 0, heading: 'Setup', content: 'first' },
      });
      expect(byId.get(pointId('kb/guides/setup.md', 1))).toEqual({
        id: pointId('kb/guides/setup.md', 1),
        vector: Array.from(v(0, 1)),
        payload: { ...payload, chunk_index: 1, heading: 'Setup › Run', content: 'second' },
      });
    });

    it("limits a search to the caller's readable folders, on whole path segments", async () => {
      const name = collection();
      const s = store(name);
      await s.init(EMBEDDER);
      await s.replaceDocuments(
        ['team-a/x.md', 'team-b/y.md', 'team-b2/w.md', 'shared/deep/z.md'].map((documentId) => ({
          documentId,
          revision: 1,
          title: documentId,
          tags: [],
          chunks: [chunk(0, v(1))],
        })),
      );
      const hits = await s.search(v(1), { limit: 10, folders: ['team-b/', 'shared/'] });
      expect(hits.map((h) => h.documentId).sort()).toEqual(['shared/deep/z.md', 'team-b/y.md']);
    });

    it('sends nothing for no documents, and names the failure of a request the server refuses', async () => {
      const name = newName(); // never created
      const s = store(name);
      await expect(s.replaceDocuments([])).resolves.toBeUndefined();
      await expect(s.deleteDocuments([])).resolves.toBeUndefined();
      await expect(s.deleteDocuments(['x.md'])).rejects.toThrow(
        `Qdrant delete failed: HTTP 404: Not found: Collection \`${name}\` doesn't exist!`,
      );
      await expect(s.search(v(1), { limit: 3 })).rejects.toThrow(
        /^Qdrant search failed: HTTP 404: Not found: Collection/,
      );
    });

    it('reports its collection in its check, and a deleted one as not ok', async () => {
      const name = collection();
      const s = store(name);
      await s.init(EMBEDDER);
      await expect(s.check()).resolves.toEqual({
        ok: true,
        detail: { store: 'qdrant', collection: name, collection_exists: true },
      });
      await deleteCollection(url, name);
      await expect(s.check()).resolves.toEqual({
        ok: false,
        detail: { store: 'qdrant', collection: name, collection_exists: false },
      });
    });
  },
);

const KEY = 'qdrant-test-key-0123456789';

describeWithQdrant('the Qdrant store against a node with an API key', 'binary')(
  'the Qdrant store against a node that asks for an API key and takes requests of 1 MB at most',
  () => {
    let node: QdrantNode;
    beforeAll(async () => {
      node = await QdrantNode.start({
        settings: { QDRANT__SERVICE__API_KEY: KEY, QDRANT__SERVICE__MAX_REQUEST_SIZE_MB: '1' },
      });
    });
    afterAll(() => node?.destroy());
    beforeEach(() => {
      // The client warns once per instance that the key travels over plain http (loopback here).
      jest.spyOn(console, 'warn').mockImplementation((message: unknown) => {
        expect(message).toBe('Api key is used with unsecure connection.');
      });
    });
    afterEach(() => jest.restoreAllMocks());
    const store = (collection: string, { apiKey }: { apiKey?: string } = { apiKey: KEY }) =>
      QdrantVectorStore.open({ url: node.url, apiKey, collection, checkCompatibility: false });

    it('sends the key with every request, and without it is refused with the reason', async () => {
      const s = store(newName());
      await s.init(EMBEDDER);
      await s.replaceDocuments([
        { documentId: 'k/a.md', revision: 1, title: 'A', tags: ['t'], chunks: [chunk(0, v(1))] },
        { documentId: 'k/b.md', revision: 1, title: 'B', tags: [], chunks: [chunk(0, v(0, 1))] },
      ]);
      await s.deleteDocuments(['k/b.md']);
      const hits = await s.search(v(1), { limit: 5, tags: ['t'], folder: 'k/' });
      expect(hits.map((h) => h.documentId)).toEqual(['k/a.md']);
      await expect(s.check()).resolves.toMatchObject({ ok: true });

      await expect(store(newName(), {}).init(EMBEDDER)).rejects.toThrow(
        /^Qdrant collection check failed: HTTP 401/,
      );
      await expect(store(newName(), { apiKey: 'not-the-key' }).init(EMBEDDER)).rejects.toThrow(
        /^Qdrant collection check failed: HTTP 401/,
      );
    });

    it('writes a document too large for one request in requests the server takes', async () => {
      const name = newName();
      const s = store(name);
      await s.init(EMBEDDER);
      // 600 chunks of 2.5 kB of text: some 1.6 MB of points.
      const chunks = (count: number) =>
        Array.from({ length: count }, (_, i) => chunk(i, v(1, i / 600), `${i} `.padEnd(2500, 'x')));
      // The same points in one request are refused by the server.
      await expect(
        qdrantRequest(
          node.url,
          'PUT',
          `/collections/${name}/points?wait=true`,
          {
            points: chunks(600).map((c, i) => ({
              id: i,
              vector: Array.from(c.vector),
              payload: { content: c.content },
            })),
          },
          KEY,
        ),
      ).rejects.toThrow(/larger than allowed/);

      const count = async () =>
        (
          await qdrantRequest<{ count: number }>(
            node.url,
            'POST',
            `/collections/${name}/points/count`,
            { exact: true },
            KEY,
          )
        ).count;
      await s.replaceDocuments([
        { documentId: 'big.md', revision: 1, title: 'Big', tags: [], chunks: chunks(600) },
      ]);
      expect(await count()).toBe(600);
      await s.replaceDocuments([
        { documentId: 'big.md', revision: 2, title: 'Big', tags: [], chunks: chunks(300) },
      ]);
      expect(await count()).toBe(300);
    });
  },
);
