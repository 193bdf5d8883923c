import { Inject, Injectable, Logger } from '@nestjs/common';
import { EMBEDDER, Embedder } from '../embedders/embedder.interface';
import { VECTOR_STORE, VectorStore } from './vector-store.interface';

/** After a failed attempt, callers get the same error for this long before the next try. */
const RETRY_AFTER_MS = 5000;

/**
 * Prepares the vector store for the embedder once (collection, indexes, or the check of
 * what the table holds) before anything writes or searches. A store that is down at start
 * (Qdrant restarting) is tried again on later use instead of stopping the server; when the
 * store reports it holds no vector of the documents (another embedder's dropped, a new
 * collection), every document is queued again.
 */
@Injectable()
export class VectorStoreInitializer {
  private readonly logger = new Logger('VectorStore');
  private done = false;
  private attempt: Promise<void> | undefined;
  private lastFailure: { at: number; error: Error } | undefined;
  private readonly resetHandlers: Array<(why: string) => Promise<void>> = [];

  constructor(
    @Inject(VECTOR_STORE) private readonly store: VectorStore,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
  ) {}

  /** What to do when the store holds no vector of the documents any more (told at start-up). */
  onReset(handler: (why: string) => Promise<void>): void {
    this.resetHandlers.push(handler);
  }

  /** Resolves once the store is ready; rejects with the reason it is not. */
  ready(): Promise<void> {
    if (this.done) return Promise.resolve();
    if (this.attempt) return this.attempt;
    if (this.lastFailure && Date.now() - this.lastFailure.at < RETRY_AFTER_MS) {
      return Promise.reject(this.lastFailure.error);
    }
    this.attempt = this.initialise().finally(() => (this.attempt = undefined));
    return this.attempt;
  }

  /** `null` when ready or not tried yet, else why the last attempt failed. */
  get error(): string | null {
    return this.done ? null : (this.lastFailure?.error.message ?? null);
  }

  get isReady(): boolean {
    return this.done;
  }

  private async initialise(): Promise<void> {
    try {
      const { reset, afterReset } = await this.store.init({
        id: `${this.embedder.provider}:${this.embedder.model}`,
        dimensions: this.embedder.dimensions,
      });
      if (reset) {
        for (const handler of this.resetHandlers) await handler(reset);
        // Left undone, the next start finds the same and queues the documents again.
        await afterReset?.().catch((error: Error) =>
          this.logger.warn(
            `${reset}: not marked as done (${error.message}), asked again at the next start`,
          ),
        );
      }
      this.done = true;
      this.lastFailure = undefined;
      this.logger.log(
        `${this.store.name} store ready for ${this.embedder.provider}:${this.embedder.model} (${this.embedder.dimensions} dimensions)`,
      );
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      this.lastFailure = { at: Date.now(), error: failure };
      throw failure;
    }
  }
}
