import { QdrantVectorStore } from '../src/vectors/stores/qdrant/qdrant.vector-store';
import { FakeQdrant } from './support/fake-qdrant';

/**
 * The Qdrant store against a recording HTTP fake of Qdrant's REST API, for the faults a real
 * server cannot be made to produce on demand: a server-side failure (HTTP 500 with Qdrant's
 * error envelope) on a write. Everything else the store does runs against a real Qdrant:
 * vectors-qdrant.e2e-spec.ts, the contract in vector-stores.e2e-spec.ts and the cluster in
 * vectors-qdrant-cluster.e2e-spec.ts.
 */
describe('the Qdrant store when the server fails', () => {
  let fake: FakeQdrant;
  let store: QdrantVectorStore;
  const collection = 'kb_test';

  beforeEach(async () => {
    fake = await new FakeQdrant().start();
    store = QdrantVectorStore.open({ url: fake.url, collection, checkCompatibility: false });
  });
  afterEach(() => fake.close());

  it("surfaces a server error with Qdrant's reason", async () => {
    fake.on('POST', `/collections/${collection}/points/delete`, {
      status: 500,
      result: 'disk full',
    });
    await expect(store.deleteDocuments(['x.md'])).rejects.toThrow(
      'Qdrant delete failed: HTTP 500: disk full',
    );
    expect(fake.lines()).toEqual([`POST /collections/${collection}/points/delete?wait=true`]);
  });
});
