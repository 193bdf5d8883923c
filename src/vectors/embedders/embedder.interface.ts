/** Injection token of the configured {@link Embedder}. */
export const EMBEDDER = Symbol('EMBEDDER');

export interface EmbedOptions {
  /** Aborts the request (shutdown); the promise then rejects. */
  readonly signal?: AbortSignal;
  /**
   * cl100k token counts of the texts, when the caller has them (the chunker counted them on
   * a worker thread): the embedder need not count again on the request loop.
   */
  readonly tokens?: readonly number[];
}

/** What the embedder last saw, for readiness and the status endpoint. */
export interface EmbedderHealth {
  readonly ok: boolean;
  readonly lastSuccessAt: string | null;
  readonly lastError: string | null;
}

/**
 * Turns texts into vectors. Three implementations, chosen at start (embeddings-choice.ts):
 * `local` (offline feature hashing, the latent-semantic model's companion), `onnx` (an
 * embedding model run in this process) and `openai` (any OpenAI-compatible `/embeddings`
 * server).
 *
 * Queries and passages may be embedded differently: models trained for retrieval are
 * asymmetric (a query gets an instruction or a `query: ` prefix, a passage its own), so a
 * query goes through {@link embedQuery}, what is stored through {@link embed}.
 */
export interface Embedder {
  /** `local`, `onnx` or `openai`. */
  readonly provider: 'local' | 'onnx' | 'openai';
  /**
   * Records vectors of this embedder computed elsewhere (the local embedder's hashing on the
   * worker threads during a batch), so that its health tells when it last worked.
   */
  recordSuccess?(): void;
  /** Model name; a store never mixes vectors of two models. */
  readonly model: string;
  /** Length of every vector returned. */
  readonly dimensions: number;
  /** Largest input, in cl100k tokens, one text may have (the chunker stays under it). */
  readonly maxInputTokens: number;
  /**
   * One L2-normalised vector per text, in the order given. Splits the texts into requests
   * within the provider's limits. Rejects with {@link EmbeddingError} when the provider
   * fails or answers vectors of the wrong length.
   */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /** The L2-normalised vector of a search query; rejects as {@link embed} does. */
  embedQuery(text: string, options?: { readonly signal?: AbortSignal }): Promise<Float32Array>;
  /** Last known state; never calls a paid API. */
  health(): EmbedderHealth;
  /** What else the status endpoint shows of it (a local model: loaded or not, its threads). */
  details?(): Record<string, unknown>;
}

/** An embedding request failed; the message is safe to store and show (no secrets). */
export class EmbeddingError extends Error {
  /**
   * `true` when the provider as a whole is failing (rate limit, 5xx, network, timeout), so
   * retrying the same inputs later may work; `false` when the inputs or the configuration
   * are at fault (a 4xx, vectors of the wrong length).
   */
  readonly transient: boolean;

  constructor(message: string, options: { cause?: unknown; transient?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.name = 'EmbeddingError';
    this.transient = options.transient ?? false;
  }
}
