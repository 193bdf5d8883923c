import type { QdrantClient } from '@qdrant/js-client-rest';
import { ancestorsOf, pointId } from '../vector-payload';
import {
  DocumentPoints,
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

  constructor(
    private readonly connection: QdrantConnection,
    readonly collection: QdrantCollection,
    /** The client a search uses (its own, shorter timeout). */
    readonly searchClient: QdrantClient = collection.client,
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
    return new QdrantVectorStore(connection, collection, searchClient);
  }

  async init(embedder: { id: string; dimensions: number }): Promise<{ reset: false | string }> {
    // A collection made now holds no vector: every document is embedded into it.
    const { created } = await this.collection.ensure(embedder);
    return { reset: created && `the Qdrant collection "${this.collection.name}" is new` };
  }

  private get named(): boolean {
    return this.collection.layout === 'shared';
  }

  async replaceDocuments(documents: readonly DocumentPoints[]): Promise<void> {
    if (documents.length === 0) return;
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
    // Whatever is left of other revisions (a longer earlier version) goes, for every
    // document of the batch in one request; the document's own point (the lexical side) stays.
    await qdrantCall('delete of other revisions', () =>
      this.client.delete(this.collection.name, {
        wait: true,
        filter: {
          should: documents.map((document) => ({
            must: [{ key: 'document_id', match: { value: document.documentId } }],
            must_not: [
              { key: 'revision', match: { value: document.revision } },
              { key: 'kind', match: { value: 'document' } },
            ],
          })),
        },
      }),
    );
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

  report(): Promise<Record<string, unknown>> {
    return this.collection.describe();
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
