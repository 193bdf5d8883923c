/**
 * A store's call that failed. `transient`: the store did not answer or cannot serve now
 * (a node down, a timeout, 5xx): waiting helps, and nothing is wrong with what was asked, so
 * the pipeline gives its documents back without counting an attempt and waits for the store.
 */
export class StoreFailure extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Whether `error` is a store that is down (see {@link StoreFailure}). */
export function storeDown(error: unknown): boolean {
  return error instanceof StoreFailure && error.transient;
}

/** Injection token of the configured {@link VectorStore}. */
export const VECTOR_STORE = Symbol('VECTOR_STORE');

/** One chunk of a document, embedded. */
export interface ChunkPoint {
  readonly chunkIndex: number;
  /** L2-normalised, of the store's dimension. */
  readonly vector: Float32Array;
  /** Heading path of the chunk (`Guide › Install`), '' when none. */
  readonly heading: string;
  /** The chunk's markdown; search snippets are cut from it. */
  readonly content: string;
}

/** All chunks of one revision of a document, with the payload every point carries. */
export interface DocumentPoints {
  readonly documentId: string;
  readonly revision: number;
  readonly title: string;
  readonly tags: readonly string[];
  readonly chunks: readonly ChunkPoint[];
}

export interface VectorSearchOptions {
  /** Documents wanted (each appears once, with its best chunk). */
  readonly limit: number;
  /** Only documents under this folder: a normalised prefix ending in `/` (see folderOf). */
  readonly folder?: string;
  /** Only documents carrying every one of these tags. */
  readonly tags?: readonly string[];
  /**
   * Only documents under one of these folders (each ending in `/`): those the caller may read
   * under an access policy.
   */
  readonly folders?: readonly string[];
}

/** A document's best-scoring chunk. */
export interface VectorHit {
  readonly documentId: string;
  readonly chunkIndex: number;
  readonly revision: number;
  /** Cosine similarity of the chunk to the query, from -1 to 1. */
  readonly score: number;
  readonly heading: string;
  readonly content: string;
  /**
   * The document's title, read with the chunk in the same statement when the store lives in
   * this database: `null` when the document is deleted. Absent when the store cannot tell
   * (Qdrant): the caller asks PostgreSQL which documents are alive.
   */
  readonly title?: string | null;
}

/** Whether the store answers, and what it holds, for readiness and the status endpoint. */
export interface VectorStoreCheck {
  readonly ok: boolean;
  readonly detail: Record<string, unknown>;
}

/** What {@link VectorStore.init} found: whether every document must be embedded again. */
export interface StoreReady {
  readonly reset: false | string;
  /** Called once every document is queued again (what marked the store as needing it goes). */
  readonly afterReset?: () => Promise<void>;
}

/**
 * Where chunk vectors live and are searched. Two implementations: `postgres` (a table of
 * this database, searched exactly) and `qdrant`, chosen by VECTOR_STORE.
 */
export interface VectorStore {
  readonly name: 'postgres' | 'qdrant';
  /**
   * Prepares the store for vectors from `embedder` (creating what is missing). Resolves
   * `reset` with the reason when the store holds no vector of the documents any more (another
   * embedder's were discarded, or it was made empty now), so every document must be embedded
   * again; rejects when the store cannot take these vectors.
   */
  init(embedder: { id: string; dimensions: number }): Promise<StoreReady>;
  /**
   * Makes each document's `points` its only points: upserts them (ids are deterministic per
   * document and chunk index) and deletes the document's points of any other revision.
   * Several documents go in one call (one statement or request where the store allows).
   */
  replaceDocuments(documents: readonly DocumentPoints[]): Promise<void>;
  /** Deletes every point of these documents (no-op for those without any). */
  deleteDocuments(documentIds: readonly string[]): Promise<void>;
  /** Best chunk per document, best documents first, at most `options.limit` of them. */
  search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorHit[]>;
  check(): Promise<VectorStoreCheck>;
  /** Name and non-secret settings, for the status endpoint. */
  describe(): Record<string, unknown>;
  /**
   * What the store says of itself now, for the status endpoint (Qdrant: the collection's
   * points, state, shards, replication and write consistency). Rejects when it cannot tell.
   */
  report?(): Promise<Record<string, unknown>>;
  /** Releases connections and timers. */
  close(): Promise<void>;
}
