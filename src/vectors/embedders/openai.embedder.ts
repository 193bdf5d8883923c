import OpenAI, { APIError, APIUserAbortError } from 'openai';
import { safeMessage } from '../../common/fault';
import { normalise } from '../../common/unit-vector';
import { Embedder, EmbedderHealth, EmbeddingError, EmbedOptions } from './embedder.interface';
import { countTokens } from './tokenizer';
import { EmbedderMetrics } from './embedder.metrics';
import type { KnownModel } from '../../models/known-models';

/** Vector length of OpenAI's models when EMBEDDINGS_DIMENSIONS is not set. */
export const KNOWN_MODEL_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/** The API's own limits on one request: inputs, and tokens summed over the inputs. */
const API_MAX_INPUTS = 2048;
const API_MAX_TOKENS = 300_000;
/** Headroom under the token limit: other models' tokenizers count a little differently. */
const BATCH_TOKEN_BUDGET = Math.floor(API_MAX_TOKENS * 0.8);

export interface OpenAiEmbedderOptions {
  readonly apiKey: string | undefined;
  /** Any OpenAI-compatible server, `/v1` included (`http://localhost:11434/v1`). */
  readonly baseUrl: string | undefined;
  readonly model: string;
  /** Requested from the server (`dimensions`) only when configured. */
  readonly dimensions: number | undefined;
  readonly maxInputTokens: number;
  readonly batchSize: number;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  /**
   * The model's description when the server runs one this server knows (models/known-models.ts,
   * matched by name or Hugging Face id): its query and passage prefixes are added here, since
   * an OpenAI-compatible server embeds what it is given, and its length is known.
   */
  readonly known?: KnownModel;
}

/**
 * Embeddings from OpenAI or any server speaking its `/embeddings` API (Azure OpenAI, Ollama,
 * vLLM, TEI, ...), through the `openai` package: its retries (429, 5xx, timeouts, with
 * `Retry-After`) and timeouts. Inputs go in batches within the API's limits. Every HTTP
 * attempt, retries included, is counted in `embedding_requests_total` and timed. A
 * response whose vectors do not have the expected length is rejected with a message that
 * says what to configure.
 */
export class OpenAiEmbedder implements Embedder {
  readonly provider = 'openai' as const;
  readonly model: string;
  readonly dimensions: number;
  readonly maxInputTokens: number;
  private readonly client: OpenAI;
  private readonly requestDimensions: number | undefined;
  private readonly batchSize: number;
  private lastSuccessAt: string | null = null;
  private lastError: string | null = null;
  private readonly prefixes: { readonly query: string; readonly passage: string };

  constructor(
    options: OpenAiEmbedderOptions,
    private readonly metrics: EmbedderMetrics,
  ) {
    const dimensions =
      options.dimensions ?? KNOWN_MODEL_DIMENSIONS[options.model] ?? options.known?.dimensions;
    this.prefixes = {
      query: options.known?.queryPrefix ?? '',
      passage: options.known?.passagePrefix ?? '',
    };
    if (dimensions === undefined) {
      throw new Error(
        `EMBEDDINGS_DIMENSIONS is required for the model "${options.model}": its vector length is not known here`,
      );
    }
    this.model = options.model;
    this.dimensions = dimensions;
    this.requestDimensions = options.dimensions;
    this.maxInputTokens = options.maxInputTokens;
    this.batchSize = Math.min(options.batchSize, API_MAX_INPUTS);
    this.client = new OpenAI({
      // Keyless compatible servers (a local Ollama) still get a syntactically valid header.
      apiKey: options.apiKey ?? 'no-key',
      baseURL: options.baseUrl ?? 'https://api.openai.com/v1',
      // Everything comes from AppConfig: nothing from the package's own environment lookups.
      organization: null,
      project: null,
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
      logLevel: 'off',
      fetch: (input, init) => this.countedFetch(input, init),
    });
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    const prefix = this.prefixes.passage;
    return this.embedTexts(prefix === '' ? texts : texts.map((text) => prefix + text), options);
  }

  async embedQuery(text: string, options: { signal?: AbortSignal } = {}): Promise<Float32Array> {
    return (await this.embedTexts([this.prefixes.query + text], options))[0];
  }

  private async embedTexts(
    texts: readonly string[],
    options: EmbedOptions,
  ): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    try {
      for (const batch of this.batches(texts, options.tokens)) {
        vectors.push(...(await this.request(batch, options.signal)));
      }
    } catch (error) {
      if (error instanceof APIUserAbortError || options.signal?.aborted) throw error;
      const failure = error instanceof EmbeddingError ? error : this.describe(error);
      this.lastError = failure.message;
      throw failure;
    }
    this.lastSuccessAt = new Date().toISOString();
    this.lastError = null;
    return vectors;
  }

  health(): EmbedderHealth {
    return {
      ok: this.lastError === null,
      lastSuccessAt: this.lastSuccessAt,
      lastError: this.lastError,
    };
  }

  private async request(batch: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const response = await this.client.embeddings.create(
      {
        model: this.model,
        input: batch,
        // The package would ask for base64 and decode it; floats are what every
        // compatible server implements.
        encoding_format: 'float',
        ...(this.requestDimensions !== undefined ? { dimensions: this.requestDimensions } : {}),
      },
      { signal },
    );
    if (!Array.isArray(response.data) || response.data.length !== batch.length) {
      throw new EmbeddingError(
        `the embeddings server returned ${Array.isArray(response.data) ? response.data.length : 'no'} vectors for ${batch.length} inputs`,
      );
    }
    const ordered = [...response.data].sort((a, b) => a.index - b.index);
    return ordered.map((item) => {
      const values = item.embedding as unknown;
      if (!Array.isArray(values) || values.length !== this.dimensions) {
        const got = Array.isArray(values) ? `${values.length}-dimensional vectors` : 'no vector';
        throw new EmbeddingError(
          `dimension mismatch: the embeddings server returned ${got} for model "${this.model}", ` +
            `but ${this.dimensions} dimensions are expected; set EMBEDDINGS_DIMENSIONS to the model's ` +
            `vector length (then POST /admin/vectors/reindex)`,
        );
      }
      return normalise(Float32Array.from(values as number[]));
    });
  }

  /** Consecutive batches within the configured size and the API's token budget. */
  private *batches(texts: readonly string[], counts?: readonly number[]): Generator<string[]> {
    let batch: string[] = [];
    let tokens = 0;
    for (const [i, text] of texts.entries()) {
      const cost = counts?.[i] ?? countTokens(text);
      if (
        batch.length > 0 &&
        (batch.length >= this.batchSize || tokens + cost > BATCH_TOKEN_BUDGET)
      ) {
        yield batch;
        batch = [];
        tokens = 0;
      }
      batch.push(text);
      tokens += cost;
    }
    if (batch.length > 0) yield batch;
  }

  private async countedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const stop = this.metrics.embeddingDuration.startTimer({ provider: this.provider });
    let outcome = 'network_error';
    try {
      const response = await fetch(input, init);
      outcome = response.ok
        ? 'success'
        : response.status === 429
          ? 'rate_limited'
          : response.status >= 500
            ? 'server_error'
            : 'client_error';
      return response;
    } catch (error) {
      if (init?.signal?.aborted) outcome = 'aborted';
      throw error;
    } finally {
      stop();
      this.metrics.embeddingRequests.inc({ provider: this.provider, outcome });
    }
  }

  private describe(error: unknown): EmbeddingError {
    if (error instanceof APIError) {
      const status = error.status;
      return new EmbeddingError(
        `embeddings request failed${status === undefined ? '' : ` (HTTP ${status})`}: ${safeMessage(error.message)}`,
        // No status: connection error or timeout.
        { cause: error, transient: status === undefined || status === 429 || status >= 500 },
      );
    }
    return new EmbeddingError(
      `embeddings request failed: ${safeMessage(String((error as Error)?.message ?? error))}`,
      {
        cause: error,
        transient: true,
      },
    );
  }
}
