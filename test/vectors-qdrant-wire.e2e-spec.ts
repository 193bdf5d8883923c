import { QdrantVectorStore } from '../src/vectors/stores/qdrant/qdrant.vector-store';
import { pointId } from '../src/vectors/stores/vector-payload';
import { FakeQdrant } from './support/fake-qdrant';

/**
 * Pins the Qdrant adapter's requests (methods, paths, query strings, bodies) against a
 * recording HTTP fake: what a real Qdrant server receives from us. The store's behaviour
 * against a real server is covered by the contract suite when QDRANT_URL is set.
 */
describe('Qdrant adapter on the wire', () => {
  let fake: FakeQdrant;
  let store: QdrantVectorStore;
  const collection = 'kb_test';
  const base = `/collections/${collection}`;

  beforeEach(async () => {
    // The client warns once per instance when a key travels over plain http (the fake).
    jest.spyOn(console, 'warn').mockImplementation((message: unknown) => {
      expect(message).toBe('Api key is used with unsecure connection.');
    });
    fake = await new FakeQdrant().start();
    store = QdrantVectorStore.open({
      url: fake.url,
      apiKey: 'qdrant-secret-key',
      collection,
      checkCompatibility: false,
    });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await fake.close();
  });

  it('creates a missing collection (cosine, the embedder size) and its three payload indexes', async () => {
    let created = false;
    fake.on('GET', `${base}/exists`, () => ({ result: { exists: created } }));
    fake.on('PUT', base, () => {
      created = true;
      return { result: true };
    });
    fake.on('GET', base, {
      result: {
        config: { params: { vectors: { size: 8, distance: 'Cosine' } } },
        payload_schema: {},
      },
    });

    await expect(store.init({ id: 'local:test', dimensions: 8 })).resolves.toEqual({
      reset: false,
    });

    expect(fake.lines()).toEqual([
      `GET ${base}/exists`,
      `PUT ${base}`,
      `GET ${base}`,
      `PUT ${base}/index?wait=true`,
      `PUT ${base}/index?wait=true`,
      `PUT ${base}/index?wait=true`,
    ]);
    expect(fake.requests[1].body).toEqual({ vectors: { size: 8, distance: 'Cosine' } });
    expect(fake.requests.slice(3).map((r) => r.body)).toEqual([
      { field_name: 'document_id', field_schema: 'keyword' },
      { field_name: 'ancestors', field_schema: 'keyword' },
      { field_name: 'tags', field_schema: 'keyword' },
    ]);
    // The key goes in Qdrant's header, on every request.
    expect(fake.requests.every((r) => r.headers['api-key'] === 'qdrant-secret-key')).toBe(true);
  });

  it('leaves an existing collection alone and creates only the missing indexes', async () => {
    fake.on('GET', `${base}/exists`, { result: { exists: true } });
    fake.on('GET', base, {
      result: {
        config: { params: { vectors: { size: 8, distance: 'Cosine' } } },
        payload_schema: { document_id: { data_type: 'keyword' }, tags: { data_type: 'keyword' } },
      },
    });
    await store.init({ id: 'local:test', dimensions: 8 });
    expect(fake.lines()).toEqual([
      `GET ${base}/exists`,
      `GET ${base}`,
      `PUT ${base}/index?wait=true`,
    ]);
    expect(fake.requests[2].body).toEqual({ field_name: 'ancestors', field_schema: 'keyword' });
  });

  it('refuses a collection of another vector size, saying what to do', async () => {
    fake.on('GET', `${base}/exists`, { result: { exists: true } });
    fake.on('GET', base, {
      result: {
        config: { params: { vectors: { size: 1536, distance: 'Cosine' } } },
        payload_schema: {},
      },
    });
    await expect(store.init({ id: 'local:feature-hashing', dimensions: 8 })).rejects.toThrow(
      /collection "kb_test" holds 1536-dimensional Cosine vectors, but the embedder \(local:feature-hashing\) makes 8-dimensional ones.*QDRANT_COLLECTION/,
    );
    // Nothing was created or deleted.
    expect(fake.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('upserts points with deterministic ids and the payload, then deletes the other revisions', async () => {
    await store.replaceDocuments([
      {
        documentId: 'kb/guides/setup.md',
        revision: 7,
        title: 'Setup',
        tags: ['ops', 'guide'],
        chunks: [
          { chunkIndex: 0, vector: Float32Array.from([1, 0]), heading: 'Setup', content: 'first' },
          {
            chunkIndex: 1,
            vector: Float32Array.from([0, 1]),
            heading: 'Setup › Run',
            content: 'second',
          },
        ],
      },
      { documentId: 'kb/other.md', revision: 2, title: 'Other', tags: [], chunks: [] },
    ]);
    expect(fake.lines()).toEqual([
      `PUT ${base}/points?wait=true`,
      `POST ${base}/points/delete?wait=true`,
    ]);
    expect(fake.requests[0].body).toEqual({
      points: [
        {
          id: pointId('kb/guides/setup.md', 0),
          vector: [1, 0],
          payload: {
            document_id: 'kb/guides/setup.md',
            chunk_index: 0,
            revision: 7,
            title: 'Setup',
            tags: ['ops', 'guide'],
            ancestors: ['kb/', 'kb/guides/', 'kb/guides/setup.md/'],
            heading: 'Setup',
            content: 'first',
          },
        },
        {
          id: pointId('kb/guides/setup.md', 1),
          vector: [0, 1],
          payload: {
            document_id: 'kb/guides/setup.md',
            chunk_index: 1,
            revision: 7,
            title: 'Setup',
            tags: ['ops', 'guide'],
            ancestors: ['kb/', 'kb/guides/', 'kb/guides/setup.md/'],
            heading: 'Setup › Run',
            content: 'second',
          },
        },
      ],
    });
    expect(fake.requests[1].body).toEqual({
      filter: {
        should: [
          {
            must: [{ key: 'document_id', match: { value: 'kb/guides/setup.md' } }],
            must_not: [{ key: 'revision', match: { value: 7 } }],
          },
          {
            must: [{ key: 'document_id', match: { value: 'kb/other.md' } }],
            must_not: [{ key: 'revision', match: { value: 2 } }],
          },
        ],
      },
    });
  });

  it('sends large documents in batches of 256 points', async () => {
    await store.replaceDocuments([
      {
        documentId: 'big.md',
        revision: 1,
        title: 'Big',
        tags: [],
        chunks: Array.from({ length: 600 }, (_, i) => ({
          chunkIndex: i,
          vector: Float32Array.from([1, 0]),
          heading: '',
          content: `chunk ${i}`,
        })),
      },
    ]);
    const upserts = fake.requests.filter((r) => r.path === `${base}/points`);
    expect(upserts.map((r) => (r.body as { points: unknown[] }).points.length)).toEqual([
      256, 256, 88,
    ]);
  });

  it('deletes documents by filter, several in one request, and sends nothing for none', async () => {
    await store.deleteDocuments([]);
    await store.deleteDocuments(['kb/old.md', 'kb/older.md']);
    expect(fake.lines()).toEqual([`POST ${base}/points/delete?wait=true`]);
    expect(fake.requests[0].body).toEqual({
      filter: { must: [{ key: 'document_id', match: { any: ['kb/old.md', 'kb/older.md'] } }] },
    });
  });

  it('searches best chunk per document with folder and tag filters, and reads the groups', async () => {
    fake.on('POST', `${base}/points/query/groups`, {
      result: {
        groups: [
          {
            id: 'kb/a.md',
            hits: [
              {
                id: pointId('kb/a.md', 2),
                version: 1,
                score: 0.91,
                payload: {
                  document_id: 'kb/a.md',
                  chunk_index: 2,
                  revision: 3,
                  heading: 'A',
                  content: 'alpha',
                },
              },
            ],
          },
          {
            id: 'kb/b.md',
            hits: [
              {
                id: pointId('kb/b.md', 0),
                version: 1,
                score: 0.5,
                payload: {
                  document_id: 'kb/b.md',
                  chunk_index: 0,
                  revision: 1,
                  heading: '',
                  content: 'beta',
                },
              },
            ],
          },
        ],
      },
    });
    const hits = await store.search(Float32Array.from([0.6, 0.8]), {
      limit: 5,
      folder: 'kb/',
      tags: ['ops', 'guide'],
    });
    expect(fake.lines()).toEqual([`POST ${base}/points/query/groups`]);
    expect(fake.requests[0].body).toEqual({
      query: [Math.fround(0.6), Math.fround(0.8)],
      group_by: 'document_id',
      group_size: 1,
      limit: 5,
      filter: {
        must: [
          { key: 'ancestors', match: { value: 'kb/' } },
          { key: 'tags', match: { value: 'ops' } },
          { key: 'tags', match: { value: 'guide' } },
        ],
      },
      with_payload: ['document_id', 'chunk_index', 'revision', 'heading', 'content'],
    });
    expect(hits).toEqual([
      {
        documentId: 'kb/a.md',
        chunkIndex: 2,
        revision: 3,
        score: 0.91,
        heading: 'A',
        content: 'alpha',
      },
      {
        documentId: 'kb/b.md',
        chunkIndex: 0,
        revision: 1,
        score: 0.5,
        heading: '',
        content: 'beta',
      },
    ]);
  });

  it("limits a search to the caller's readable folders with one match on the ancestors", async () => {
    fake.on('POST', `${base}/points/query/groups`, { result: { groups: [] } });
    await store.search(Float32Array.from([1, 0]), {
      limit: 3,
      folders: ['team-b/', 'shared/'],
    });
    expect(fake.requests[0].body).toMatchObject({
      filter: { must: [{ key: 'ancestors', match: { any: ['team-b/', 'shared/'] } }] },
    });
  });

  it('sends no filter when none is asked, and reports the collection in its check', async () => {
    fake.on('POST', `${base}/points/query/groups`, { result: { groups: [] } });
    fake.on('GET', `${base}/exists`, { result: { exists: true } });
    await expect(store.search(Float32Array.from([1, 0]), { limit: 3 })).resolves.toEqual([]);
    expect(fake.requests[0].body).not.toHaveProperty('filter');
    await expect(store.check()).resolves.toEqual({
      ok: true,
      detail: { store: 'qdrant', collection, collection_exists: true },
    });
  });

  it('surfaces a server error', async () => {
    fake.on('POST', `${base}/points/delete`, { status: 500, result: 'disk full' });
    await expect(store.deleteDocuments(['x.md'])).rejects.toThrow(
      'Qdrant delete failed: HTTP 500: disk full',
    );
  });
});
