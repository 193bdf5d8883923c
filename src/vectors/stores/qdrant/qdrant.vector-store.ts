import type { QdrantClient } from '@qdrant/js-client-rest';
import { ancestorsOf, pointId } from '../vector-payload';
import {
  DocumentPoints,
  StoreReady,
  VectorHit,
  VectorSearchOptions,
  VectorStore,
  VectorStoreCheck,
} from '../vector-store.interface';
import { SEMANTIC_DIMENSIONS } from '../../semantic/semantic-training';
import {
  type CollectionLayout,
  type CollectionSettings,
  DENSE_VECTOR,
  QdrantCollection,
  SEMANTIC_VECTORS,
} from './qdrant-collection';
import {
  qdrantCall,
  qdrantClient,
  type QdrantConnection,
  qdrantRead,
  shownUrl,
} from './qdrant-connection';
import { scopeFilter } from './scope-filter';
import { wireVector } from './wire-vector';

const UPSERT_BATCH = 256;

/** Where the store is and how its collection is made (qdrant-collection.ts). */
export interface QdrantStoreOptions {
  /** Base URL with port, e.g. `http://qdrant:6333` (a path is used as the API prefix). */
  readonly url: string;
  readonly apiKey?: string;
  readonly collection: string;
  /** Ask the server's version at start and warn on a mismatch (off in tests). */
  readonly checkCompatibility?: boolean;
  /** Longest wait for an answer to a write or at start (default 10 s) and to a search (3 s). */
  readonly timeoutMs?: number;
  readonly searchTimeoutMs?: number;
  /** What a collection made now holds (default: passages only). */
  readonly layout?: CollectionLayout;
  /** Shards, replication and write consistency of a collection made now (default 1, 1, 1). */
  readonly settings?: Partial<CollectionSettings>;
  /**
   * Forgets the latent-semantic models learnt for this collection (their rows in PostgreSQL),
   * called when their vectors are dropped from its points ({@link QdrantVectorStore.init}).
   */
  readonly forgetSemanticModels?: () => Promise<void>;
}

/** What a passage's point carries. */
export interface ChunkPayload {
  document_id: string;
  kind: 'chunk';
  chunk_index: number;
  revision: number;
  title: string;
  tags: string[];
  ancestors: string[];
  heading: string;
  content: string;
}

/**
 * The Qdrant vector store (`@qdrant/js-client-rest`): one point per chunk, id derived from
 * the document id and chunk index, cosine distance, payload with the document id, chunk
 * index, revision, title, tags and folder ancestors. The collection (qdrant-collection.ts) is
 * made at start when missing; an existing collection of another vector size is refused
 * rather than dropped (it may hold someone else's data). In a collection that also holds the
 * lexical side, the passages' vector is the named vector `dense` and the documents' own
 * points (qdrant-lexical.index.ts) are left alone by what this store deletes.
 */
export class QdrantVectorStore implements VectorStore {
  readonly name = 'qdrant' as const;
  private readonly client: QdrantClient;
  /** Whether the passages are written now (see {@link writePassagesWhile}). */
  private passagesWanted: () => Promise<boolean> = () => Promise.resolve(true);
  /** Documents found without their passages' vectors at start, queued again (the status). */
  private documentsWithoutPassages = 0;

  constructor(
    private readonly connection: QdrantConnection,
    readonly collection: QdrantCollection,
    /** The client a search uses (its own, shorter timeout). */
    readonly searchClient: QdrantClient = collection.client,
    private readonly forgetSemanticModels: () => Promise<void> = async () => undefined,
  ) {
    this.client = collection.client;
  }

  static open(options: QdrantStoreOptions): QdrantVectorStore {
    const connection: QdrantConnection = {
      url: options.url,
      apiKey: options.apiKey,
      checkCompatibility: options.checkCompatibility,
      timeoutMs: options.timeoutMs ?? 10_000,
    };
    const collection = new QdrantCollection(
      qdrantClient(connection),
      options.collection,
      options.layout ?? 'vectors',
      {
        shards: 1,
        replicationFactor: 1,
        writeConsistency: 1,
        segments: 8,
        semanticDimensions: SEMANTIC_DIMENSIONS,
        passageGraph: true,
        ...options.settings,
      },
    );
    const searchClient = qdrantClient({
      ...connection,
      checkCompatibility: false,
      timeoutMs: options.searchTimeoutMs ?? 3_000,
    });
    return new QdrantVectorStore(
      connection,
      collection,
      searchClient,
      options.forgetSemanticModels,
    );
  }

  async init(embedder: { id: string; dimensions: number }): Promise<StoreReady> {
    // A collection made now holds no vector: every document is embedded into it.
    const { created } = await this.collection.ensure(embedder);
    if (created) return { reset: `the Qdrant collection "${this.collection.name}" is new` };
    this.documentsWithoutPassages = this.collection.passagesSearched
      ? await this.countDocumentsWithoutPassages()
      : 0;
    if (this.documentsWithoutPassages > 0) {
      // Written while the latent-semantic model was the vector side: a server that searches
      // the passages would never find those documents by vector until each was written again.
      return {
        reset: `the Qdrant collection "${this.collection.name}" holds ${this.documentsWithoutPassages} documents written while a latent-semantic model was the vector side (their passages without vectors), and this server's vector side searches the passages`,
        afterReset: () => this.forgetSemanticVectors(),
      };
    }
    return { reset: false };
  }

  /**
   * In a collection that also holds the lexical side, the passages are written only while
   * `wanted` says so: with the latent-semantic model as the vector side they are searched only
   * until its first model is (qdrant-semantic.ts), and nothing else reads them (the results
   * shown are read from PostgreSQL). Writing them anyway was most of what the pipeline cost:
   * their 768 numbers of JSON (some 45 KB a document) in the server, and in Qdrant some five
   * points a document, their text copied again by every merge of its segments
   * (docs/performance.md). A document written meanwhile has its latent-semantic vector on its
   * own point (qdrant-lexical.index.ts): a server whose vector side is the passages counts
   * those at start and has them embedded again ({@link init}).
   */
  writePassagesWhile(wanted: () => Promise<boolean>): void {
    // Asked at each write: the layout is known only once the collection is found (init).
    this.passagesWanted = wanted;
  }

  /**
   * The documents whose own point holds a latent-semantic vector: written (or written again
   * with a new model) while such a model was the vector side, so their passages may have been
   * left out, or written without a vector by earlier versions.
   */
  private async countDocumentsWithoutPassages(): Promise<number> {
    if (!this.named) return 0;
    const { count } = await qdrantRead(
      'count of the documents written under a semantic model',
      () =>
        this.client.count(this.collection.name, {
          exact: true,
          filter: {
            must: [{ key: 'kind', match: { value: 'document' } }],
            should: Object.values(SEMANTIC_VECTORS).map((name) => ({ has_vector: name })),
          },
        }),
    );
    return count;
  }

  /**
   * Once every document is queued to be embedded again: the latent-semantic vectors that
   * marked them go (this server never searches them), so the next start is quiet. Left in
   * place on failure: the next start queues the documents again. The models whose vectors
   * they were go first: a server of that model coming back would otherwise search a model
   * whose vectors are gone (a model learnt again that says nothing new is not written again),
   * where without one it learns a model and writes every document's vector.
   */
  private async forgetSemanticVectors(): Promise<void> {
    await this.forgetSemanticModels();
    await qdrantCall('delete of the latent-semantic vectors', () =>
      this.client.deleteVectors(this.collection.name, {
        wait: true,
        filter: { must: [{ key: 'kind', match: { value: 'document' } }] },
        vector: Object.values(SEMANTIC_VECTORS),
      }),
    );
  }

  private get named(): boolean {
    return this.collection.layout === 'shared';
  }

  async replaceDocuments(documents: readonly DocumentPoints[]): Promise<void> {
    if (documents.length === 0) return;
    // Asked of a predicate that may read PostgreSQL: when it cannot tell, the passages go.
    const written = !this.named || (await this.passagesWanted().catch(() => true));
    if (written) await this.upsertPassages(documents);
    // Whatever is left of other revisions (a longer earlier version), or every passage when
    // none is written now, goes, for every document of the batch in one request; the
    // document's own point (the lexical side) stays.
    await qdrantCall('delete of other revisions', () =>
      this.client.delete(this.collection.name, {
        wait: true,
        filter: {
          should: documents.map((document) => ({
            must: [{ key: 'document_id', match: { value: document.documentId } }],
            must_not: [
              ...(written ? [{ key: 'revision', match: { value: document.revision } }] : []),
              { key: 'kind', match: { value: 'document' } },
            ],
          })),
        },
      }),
    );
  }

  /** Each document's passages as points, with their dense vectors, in requests of UPSERT_BATCH. */
  private async upsertPassages(documents: readonly DocumentPoints[]): Promise<void> {
    const points = documents.flatMap((document) => {
      const ancestors = ancestorsOf(document.documentId);
      return document.chunks.map((chunk) => {
        const vector = wireVector(chunk.vector);
        return {
          id: pointId(document.documentId, chunk.chunkIndex),
          vector: this.named ? { [DENSE_VECTOR]: vector } : vector,
          payload: {
            document_id: document.documentId,
            kind: 'chunk',
            chunk_index: chunk.chunkIndex,
            revision: document.revision,
            title: document.title,
            tags: [...document.tags],
            ancestors,
            heading: chunk.heading,
            content: chunk.content,
          } satisfies ChunkPayload,
        };
      });
    });
    for (let start = 0; start < points.length; start += UPSERT_BATCH) {
      await qdrantCall('upsert', () =>
        this.client.upsert(this.collection.name, {
          wait: true,
          points: points.slice(start, start + UPSERT_BATCH),
        }),
      );
    }
  }

  async deleteDocuments(documentIds: readonly string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await qdrantCall('delete', () =>
      this.client.delete(this.collection.name, {
        wait: true,
        filter: { must: [{ key: 'document_id', match: { any: [...documentIds] } }] },
      }),
    );
  }

  async search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorHit[]> {
    const filter = scopeFilter(options);
    const result = await qdrantRead('search', () =>
      this.searchClient.queryGroups(this.collection.name, {
        query: Array.from(vector),
        ...(this.named ? { using: DENSE_VECTOR } : {}),
        group_by: 'document_id',
        group_size: 1,
        limit: options.limit,
        ...(filter ? { filter } : {}),
        with_payload: ['document_id', 'chunk_index', 'revision', 'heading', 'content'],
      }),
    );
    return result.groups.flatMap((group) => {
      const hit = group.hits[0];
      return hit ? [chunkHit(hit)] : [];
    });
  }

  async check(): Promise<VectorStoreCheck> {
    const { exists } = await qdrantRead('collection check', () =>
      this.client.collectionExists(this.collection.name),
    );
    return {
      ok: exists,
      detail: { store: this.name, collection: this.collection.name, collection_exists: exists },
    };
  }

  describe(): Record<string, unknown> {
    return { name: this.name, url: shownUrl(this.connection), collection: this.collection.name };
  }

  async report(): Promise<Record<string, unknown>> {
    return {
      ...(await this.collection.describe()),
      passage_vectors: this.passageVectorsWritten(),
    };
  }

  /** Which passages are written with their dense vector, as the status endpoint says it. */
  private passageVectorsWritten(): string {
    if (this.documentsWithoutPassages > 0) {
      return `every passage's: ${this.documentsWithoutPassages} documents found without them at start, queued to be embedded again`;
    }
    if (!this.named || this.collection.passagesSearched) return "every passage's";
    return 'only until the first semantic model is searched: the passages are not written after it (the latent-semantic model is the vector side)';
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A passage's point found by a search, as a {@link VectorHit}. */
export function chunkHit(hit: {
  id: string | number;
  score: number;
  payload?: Record<string, unknown> | null;
}): VectorHit {
  const payload = (hit.payload ?? {}) as Partial<ChunkPayload>;
  return {
    documentId: String(payload.document_id ?? hit.id),
    chunkIndex: Number(payload.chunk_index ?? 0),
    revision: Number(payload.revision ?? 0),
    score: hit.score,
    heading: payload.heading ?? '',
    content: payload.content ?? '',
  };
}
