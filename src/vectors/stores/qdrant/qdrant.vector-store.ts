import { QdrantClient } from '@qdrant/js-client-rest';
import { ancestorsOf, pointId } from '../vector-payload';
import {
  DocumentPoints,
  VectorHit,
  VectorSearchOptions,
  VectorStore,
  VectorStoreCheck,
} from '../vector-store.interface';

export interface QdrantStoreOptions {
  /** Base URL with port, e.g. `http://qdrant:6333` (a path is used as the API prefix). */
  readonly url: string;
  readonly apiKey?: string;
  readonly collection: string;
  /** Ask the server's version at start and warn on a mismatch (off in tests). */
  readonly checkCompatibility?: boolean;
  /** Per-request timeout in milliseconds. */
  readonly timeoutMs?: number;
}

/** Payload fields filtered on, each with a keyword index. */
const INDEXED_FIELDS = ['document_id', 'ancestors', 'tags'] as const;
const UPSERT_BATCH = 256;

interface ChunkPayload {
  document_id: string;
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
 * index, revision, title, tags and folder ancestors. The collection and its payload
 * indexes are created at start when missing; an existing collection of another vector
 * size is refused rather than dropped (it may hold someone else's data).
 */
export class QdrantVectorStore implements VectorStore {
  readonly name = 'qdrant' as const;
  private readonly client: QdrantClient;
  private readonly collection: string;

  constructor(private readonly options: QdrantStoreOptions) {
    const url = new URL(options.url);
    const prefix = url.pathname.replace(/\/+$/, '');
    this.client = new QdrantClient({
      url: url.origin,
      ...(prefix ? { prefix } : {}),
      apiKey: options.apiKey,
      checkCompatibility: options.checkCompatibility ?? true,
      timeout: options.timeoutMs ?? 10_000,
    });
    this.collection = options.collection;
  }

  async init(embedder: { id: string; dimensions: number }): Promise<{ reset: boolean }> {
    const { exists } = await this.call('collection check', () =>
      this.client.collectionExists(this.collection),
    );
    if (!exists) {
      try {
        await this.client.createCollection(this.collection, {
          vectors: { size: embedder.dimensions, distance: 'Cosine' },
        });
      } catch (error) {
        // Another server may have created it at the same moment; the check below decides.
        const again = await this.call('collection check', () =>
          this.client.collectionExists(this.collection),
        );
        if (!again.exists) throw describe('collection creation', error);
      }
    }
    const info = await this.call('collection info', () =>
      this.client.getCollection(this.collection),
    );
    const vectors = info.config.params.vectors as { size?: number; distance?: string } | undefined;
    if (vectors?.size !== embedder.dimensions || vectors.distance !== 'Cosine') {
      throw new Error(
        `Qdrant collection "${this.collection}" holds ${vectors?.size ?? 'named or unknown'}-dimensional ` +
          `${vectors?.distance ?? ''} vectors, but the embedder (${embedder.id}) makes ` +
          `${embedder.dimensions}-dimensional ones for cosine search: set QDRANT_COLLECTION to a new ` +
          `collection (then POST /admin/vectors/reindex), or delete this one`,
      );
    }
    const schema = info.payload_schema ?? {};
    for (const field of INDEXED_FIELDS) {
      if (schema[field]) continue;
      await this.call(`payload index creation (${field})`, () =>
        this.client.createPayloadIndex(this.collection, {
          field_name: field,
          field_schema: 'keyword',
          wait: true,
        }),
      );
    }
    return { reset: false };
  }

  async replaceDocuments(documents: readonly DocumentPoints[]): Promise<void> {
    if (documents.length === 0) return;
    const points = documents.flatMap((document) => {
      const ancestors = ancestorsOf(document.documentId);
      return document.chunks.map((chunk) => ({
        id: pointId(document.documentId, chunk.chunkIndex),
        vector: Array.from(chunk.vector),
        payload: {
          document_id: document.documentId,
          chunk_index: chunk.chunkIndex,
          revision: document.revision,
          title: document.title,
          tags: [...document.tags],
          ancestors,
          heading: chunk.heading,
          content: chunk.content,
        } satisfies ChunkPayload,
      }));
    });
    for (let start = 0; start < points.length; start += UPSERT_BATCH) {
      await this.call('upsert', () =>
        this.client.upsert(this.collection, {
          wait: true,
          points: points.slice(start, start + UPSERT_BATCH),
        }),
      );
    }
    // Whatever is left of other revisions (a longer earlier version) goes, for every
    // document of the batch in one request.
    await this.call('delete of other revisions', () =>
      this.client.delete(this.collection, {
        wait: true,
        filter: {
          should: documents.map((document) => ({
            must: [{ key: 'document_id', match: { value: document.documentId } }],
            must_not: [{ key: 'revision', match: { value: document.revision } }],
          })),
        },
      }),
    );
  }

  async deleteDocuments(documentIds: readonly string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await this.call('delete', () =>
      this.client.delete(this.collection, {
        wait: true,
        filter: { must: [{ key: 'document_id', match: { any: [...documentIds] } }] },
      }),
    );
  }

  async search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorHit[]> {
    const must = [
      ...(options.folder !== undefined
        ? [{ key: 'ancestors', match: { value: options.folder } }]
        : []),
      ...(options.tags ?? []).map((tag) => ({ key: 'tags', match: { value: tag } })),
      // Under one of the folders: one of the document's ancestors is one of them.
      ...(options.folders !== undefined
        ? [{ key: 'ancestors', match: { any: [...options.folders] } }]
        : []),
    ];
    const result = await this.call('search', () =>
      this.client.queryGroups(this.collection, {
        query: Array.from(vector),
        group_by: 'document_id',
        group_size: 1,
        limit: options.limit,
        ...(must.length > 0 ? { filter: { must } } : {}),
        with_payload: ['document_id', 'chunk_index', 'revision', 'heading', 'content'],
      }),
    );
    return result.groups.flatMap((group) => {
      const hit = group.hits[0];
      if (!hit) return [];
      const payload = (hit.payload ?? {}) as Partial<ChunkPayload>;
      return [
        {
          documentId: String(payload.document_id ?? group.id),
          chunkIndex: Number(payload.chunk_index ?? 0),
          revision: Number(payload.revision ?? 0),
          score: hit.score,
          heading: payload.heading ?? '',
          content: payload.content ?? '',
        },
      ];
    });
  }

  async check(): Promise<VectorStoreCheck> {
    const { exists } = await this.call('collection check', () =>
      this.client.collectionExists(this.collection),
    );
    return {
      ok: exists,
      detail: { store: this.name, collection: this.collection, collection_exists: exists },
    };
  }

  describe(): Record<string, unknown> {
    const url = new URL(this.options.url);
    return {
      name: this.name,
      url: `${url.origin}${url.pathname.replace(/\/+$/, '')}`,
      collection: this.collection,
    };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Runs one client call, turning its failure into an error that says what failed and why. */
  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw describe(what, error);
    }
  }
}

function describe(what: string, error: unknown): Error {
  const e = error as {
    status?: number;
    statusText?: string;
    data?: { status?: { error?: string } };
    message?: string;
  };
  const reason =
    typeof e.status === 'number'
      ? `HTTP ${e.status}${e.data?.status?.error ? `: ${e.data.status.error}` : e.statusText ? ` ${e.statusText}` : ''}`
      : (e.message ?? String(error));
  return new Error(`Qdrant ${what} failed: ${reason}`, { cause: error });
}
