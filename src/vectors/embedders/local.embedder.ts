import type { EmbedderMetrics } from './embedder.metrics';
import { EmbedOptions, Embedder, EmbedderHealth } from './embedder.interface';
import { featureHash } from './feature-hashing';

/** Default length of local vectors (EMBEDDINGS_DIMENSIONS overrides it). */
export const LOCAL_DEFAULT_DIMENSIONS = 768;

/**
 * Texts shorter than this in all are hashed right here (a search query takes some
 * microseconds): a hop to a thread that may be busy chunking a large batch would only make
 * the search wait. Longer inputs go to the threads.
 */
const INLINE_CHARS = 4096;

/** Feature hashing of long inputs off the request loop (the vector work pool does it). */
export interface HashingThreads {
  embed(
    texts: readonly string[],
    dimensions: number,
    signal?: AbortSignal,
  ): Promise<Float32Array[]>;
}

/**
 * The offline embedder: feature hashing of words, adjacent word pairs and character
 * trigrams (see {@link featureHash}).
 *
 * Deterministic (same text, same vector, on every machine) and fast (tens of thousands of
 * chunks per second on one core), but **lexical**: texts are close when they share words
 * or word parts, not when they mean the same thing in different words. With threads, the
 * hashing of anything longer than a query runs there, off the request loop.
 */
export class LocalEmbedder implements Embedder {
  readonly provider = 'local' as const;
  readonly model: string;
  private lastSuccessAt: string | null = null;

  constructor(
    readonly dimensions: number = LOCAL_DEFAULT_DIMENSIONS,
    readonly maxInputTokens = 8191,
    private readonly metrics?: EmbedderMetrics,
    private readonly threads?: HashingThreads,
  ) {
    this.model = `feature-hashing-v1-${dimensions}`;
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    const stop = this.metrics?.embeddingDuration.startTimer({ provider: this.provider });
    const chars = texts.reduce((total, text) => total + text.length, 0);
    const vectors =
      this.threads && chars >= INLINE_CHARS
        ? await this.threads.embed(texts, this.dimensions, options.signal)
        : texts.map((text) => this.embedOne(text));
    stop?.();
    this.metrics?.embeddingRequests.inc({ provider: this.provider, outcome: 'success' });
    this.lastSuccessAt = new Date().toISOString();
    return vectors;
  }

  /** Hashing is symmetric: a query is hashed as a passage is. */
  async embedQuery(text: string, options: { signal?: AbortSignal } = {}): Promise<Float32Array> {
    return (await this.embed([text], options))[0];
  }

  health(): EmbedderHealth {
    return { ok: true, lastSuccessAt: this.lastSuccessAt, lastError: null };
  }

  recordSuccess(): void {
    this.lastSuccessAt = new Date().toISOString();
  }

  /** The vector of one text, computed synchronously. */
  embedOne(text: string): Float32Array {
    return featureHash(text, this.dimensions);
  }
}
