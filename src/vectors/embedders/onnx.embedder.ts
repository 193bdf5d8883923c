import { Logger } from '@nestjs/common';
import { chunkTokensFor } from '../../models/known-models';
import type { InstalledModel } from '../../models/model-store';
import { MODEL_FILE, TOKENIZER_FILE } from '../../models/model-store';
import { join } from 'node:path';
import type { EmbedderMetrics } from './embedder.metrics';
import { EmbedOptions, Embedder, EmbedderHealth, EmbeddingError } from './embedder.interface';
import { ModelThreads } from './model-threads';

/** Where the model stands, for the status endpoint. */
export type ModelState = 'loading' | 'ready' | 'failed';

/**
 * An embedding model run in this process (models/known-models.ts): ONNX Runtime on worker
 * threads (model-threads.ts), one for queries, one for passages. The model is loaded after
 * start-up ({@link load}), so liveness and MCP handshakes never wait for it; a search that
 * comes first waits for the query thread's load (some 200 ms for a q8 model).
 */
export class OnnxEmbedder implements Embedder {
  readonly provider = 'onnx' as const;
  readonly model: string;
  readonly dimensions: number;
  readonly maxInputTokens: number;
  private readonly logger = new Logger('OnnxEmbedder');
  private readonly threads: ModelThreads;
  private lastSuccessAt: string | null = null;
  private lastError: string | null = null;
  private loadState: ModelState = 'loading';

  constructor(
    readonly installed: InstalledModel,
    options: { readonly passageThreads: number },
    private readonly metrics?: EmbedderMetrics,
  ) {
    this.model = installed.model.name;
    this.dimensions = installed.model.dimensions;
    this.maxInputTokens = chunkTokensFor(installed.model);
    this.threads = new ModelThreads(
      {
        model: installed.model.name,
        files: {
          model: join(installed.dir, MODEL_FILE),
          tokenizer: join(installed.dir, TOKENIZER_FILE),
        },
      },
      options,
    );
  }

  /** Loads the model on the query thread; never rejects (a failure is logged and kept). */
  async load(): Promise<void> {
    const started = performance.now();
    try {
      await this.threads.load();
      this.loadState = 'ready';
      this.logger.log(
        `${this.model} loaded in ${Math.round(performance.now() - started)} ms (${this.installed.dir})`,
      );
    } catch (error) {
      this.loadState = 'failed';
      this.lastError = `the model ${this.model} failed to load: ${messageOf(error)}`;
      this.logger.error(this.lastError);
    }
  }

  details(): Record<string, unknown> {
    return {
      state: this.loadState,
      files: this.installed.dir,
      ...this.threads.state,
    };
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    return splitFlat(await this.run(texts, 'passage', options.signal), this.dimensions);
  }

  async embedQuery(text: string, options: { signal?: AbortSignal } = {}): Promise<Float32Array> {
    return this.run([text], 'query', options.signal);
  }

  health(): EmbedderHealth {
    return {
      ok: this.lastError === null,
      lastSuccessAt: this.lastSuccessAt,
      lastError: this.lastError,
    };
  }

  async close(): Promise<void> {
    await this.threads.close();
  }

  private async run(
    texts: readonly string[],
    kind: 'query' | 'passage',
    signal: AbortSignal | undefined,
  ): Promise<Float32Array> {
    const stop = this.metrics?.embeddingDuration.startTimer({ provider: this.provider });
    try {
      const vectors = await this.threads.embed(texts, kind, signal);
      this.metrics?.embeddingRequests.inc({ provider: this.provider, outcome: 'success' });
      this.lastSuccessAt = new Date().toISOString();
      this.lastError = null;
      if (this.loadState !== 'ready') this.loadState = 'ready';
      return vectors;
    } catch (error) {
      if (signal?.aborted) throw error;
      this.metrics?.embeddingRequests.inc({ provider: this.provider, outcome: 'error' });
      // A model that cannot run is not a passing fault: retrying the same texts will not help.
      const failure = new EmbeddingError(`the model ${this.model} failed: ${messageOf(error)}`, {
        cause: error,
      });
      this.lastError = failure.message;
      throw failure;
    } finally {
      stop?.();
    }
  }
}

/** Views of vectors laid back to back, one per vector (no copy). */
function splitFlat(flat: Float32Array, dimensions: number): Float32Array[] {
  const vectors: Float32Array[] = [];
  for (let at = 0; at < flat.length; at += dimensions)
    vectors.push(flat.subarray(at, at + dimensions));
  return vectors;
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0].slice(0, 500);
}
