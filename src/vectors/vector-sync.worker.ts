import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { VectorWorkRow } from '../documents/documents.repository';
import { DocumentsService } from '../documents/documents.service';
import { EMBEDDER, Embedder } from './embedder.interface';
import { chunkMarkdown, ChunkerOptions, DEFAULT_CHUNKER_OPTIONS } from './markdown-chunker';
import { VECTOR_STORE, VectorStore } from './vector-store.interface';
import { VectorStoreInitializer } from './vector-store.initializer';
import { SyncResult, VectorsMetrics } from './vectors.metrics';

/** Longest wait between two retries of a failed document. */
const MAX_RETRY_MS = 5 * 60 * 1000;
/** When a document in `error` gets one more attempt (from the recovery sweep). */
const ERROR_RETRY_MS = 15 * 60 * 1000;
/** How long a stopping worker lets documents in progress finish before aborting them. */
const STOP_GRACE_MS = 5000;
/** Waits after the queue itself (PostgreSQL) failed, doubling up to the cap. */
const QUEUE_ERROR_BASE_MS = 500;
const QUEUE_ERROR_MAX_MS = 30_000;
/** Longest sleep before looking at a due retry again (clocks of servers may differ a little). */
const MAX_IDLE_MS = 60_000;

interface Task {
  readonly item: VectorWorkRow;
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

/** Thrown inside a task when its lease would expire before it could finish. */
class LeaseDeadline extends Error {}

/**
 * The sync worker: claims pending documents (several workers and processes share the queue
 * through `FOR UPDATE SKIP LOCKED` and a lease), chunks them, embeds the chunks in batches,
 * replaces the document's points in the store, and marks the document `ready` only if the
 * revision it embedded is still current; otherwise the document stays pending and is
 * redone. Deleted documents lose their points (`removed`); skipped prefixes and empty
 * bodies get `skipped`. Failures are retried with exponential backoff, then `error`.
 *
 * At most `VECTOR_WORKER_CONCURRENCY` documents are in progress at once. It sleeps when the
 * queue is empty and wakes on {@link wake} (a notification, a sweep) or when a retry is due.
 * {@link stop} lets documents in progress finish for a moment, then aborts them and gives
 * their leases back, so nothing is left claimed.
 */
@Injectable()
export class VectorSyncWorker {
  private readonly logger = new Logger('VectorSyncWorker');
  private readonly tasks = new Map<string, Task>();
  private readonly chunker: ChunkerOptions;
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeRequested = false;
  private wakeWaiter: (() => void) | undefined;
  private purges: Promise<void> = Promise.resolve();
  private stopping: Promise<void> = new Promise(() => undefined);
  private signalStop: () => void = () => undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly documents: DocumentsService,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    @Inject(VECTOR_STORE) private readonly store: VectorStore,
    private readonly stores: VectorStoreInitializer,
    private readonly metrics: VectorsMetrics,
  ) {
    this.chunker = { ...DEFAULT_CHUNKER_OPTIONS, maxTokens: embedder.maxInputTokens };
  }

  get state(): { running: boolean; in_progress: number; concurrency: number } {
    return {
      running: this.running,
      in_progress: this.tasks.size,
      concurrency: this.config.vectorWorkerConcurrency,
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new Promise((resolve) => (this.signalStop = resolve));
    this.loop = this.run();
  }

  /** Something may be pending: look at the queue again (cheap; calls coalesce). */
  wake(): void {
    this.wakeRequested = true;
    this.wakeWaiter?.();
  }

  /**
   * A row was deleted outright (not soft-deleted): its points go unless the id exists again.
   * The PostgreSQL store's rows already went with it (foreign key); Qdrant's did not.
   */
  purged(documentId: string): void {
    this.purges = this.purges.then(async () => {
      try {
        if (await this.documents.exists(documentId)) return;
        await this.stores.ready();
        await this.store.deleteDocument(documentId);
      } catch (error) {
        this.logger.warn(`points of purged ${documentId} not deleted: ${String(error)}`);
      }
    });
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.signalStop();
    this.wake();
    await this.loop;
    const all = () => Promise.allSettled([...this.tasks.values()].map((t) => t.done));
    if (!(await settlesWithin(all(), STOP_GRACE_MS))) {
      this.logger.log(`stopping: aborting ${this.tasks.size} documents in progress`);
      for (const task of this.tasks.values()) task.abort.abort();
      await settlesWithin(all(), STOP_GRACE_MS);
    }
    // Tasks that did not wind down in time: their leases are given back here.
    const left = [...this.tasks.values()].map((t) => ({
      documentId: t.item.document_id,
      lease: t.item.lease,
    }));
    if (left.length > 0) await this.documents.releaseVectorLeases(left).catch(() => 0);
    await this.purges;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      const free = this.config.vectorWorkerConcurrency - this.tasks.size;
      if (free <= 0) {
        // Every slot busy: wait for one to free up (or for stop), whatever wakes arrive.
        await Promise.race([...[...this.tasks.values()].map((t) => t.done), this.stopping]);
        continue;
      }
      this.wakeRequested = false;
      let claimed: VectorWorkRow[];
      try {
        claimed = await this.documents.claimVectorWork(free, this.config.vectorLeaseMs);
        failures = 0;
      } catch (error) {
        failures++;
        const wait = Math.min(QUEUE_ERROR_MAX_MS, QUEUE_ERROR_BASE_MS * 2 ** (failures - 1));
        this.logger.warn(`claiming work failed (retry in ${wait} ms): ${String(error)}`);
        await this.sleep(wait);
        continue;
      }
      if (!this.running) {
        await this.documents.releaseVectorLeases(claimed.map(leaseOf)).catch(() => 0);
        break;
      }
      for (const item of claimed) this.begin(item);
      // A full claim means more may be waiting: look again at once. Otherwise sleep until
      // woken, or until the next retry or lease expiry is due (whoever scheduled it).
      if (claimed.length < free && !this.wakeRequested) await this.sleep(await this.nextDue());
    }
  }

  private begin(item: VectorWorkRow): void {
    const abort = new AbortController();
    const deadline = setTimeout(
      () => abort.abort(new LeaseDeadline('the lease ran out before the document was done')),
      // Stop early enough to give the document back before another worker may take it.
      Math.max(1000, this.config.vectorLeaseMs - 5000),
    );
    const done = this.process(item, abort.signal)
      .then((result) => this.metrics.documents.inc({ result }))
      .catch((error) => this.logger.error(`${item.document_id}: ${String(error)}`))
      .finally(() => {
        clearTimeout(deadline);
        this.tasks.delete(item.document_id);
        this.wake();
      });
    this.tasks.set(item.document_id, { item, abort, done });
  }

  private async process(item: VectorWorkRow, signal: AbortSignal): Promise<SyncResult> {
    const id = item.document_id;
    try {
      await this.stores.ready();
      if (item.deleted) {
        await this.store.deleteDocument(id);
        return this.finish(item, 'removed');
      }
      if (this.isSkipped(id) || item.body.trim() === '') {
        await this.store.deleteDocument(id);
        return this.finish(item, 'skipped');
      }
      const chunks = chunkMarkdown(item.body, item.title, this.chunker);
      const vectors = await this.embedder.embed(
        chunks.map((c) => c.text),
        { signal },
      );
      signal.throwIfAborted();
      // The document may have changed (or the lease been lost) while it was embedded:
      // writing then would only put back vectors that are about to be replaced.
      const current = await this.documents.vectorLeaseRevision(id, item.lease);
      if (current === null) return this.lost(item);
      if (current === item.revision) {
        await this.store.replaceDocument({
          documentId: id,
          revision: item.revision,
          title: item.title,
          tags: item.tags,
          chunks: chunks.map((chunk, i) => ({
            chunkIndex: chunk.index,
            vector: vectors[i],
            heading: chunk.headings.join(' › '),
            content: chunk.content,
          })),
        });
      }
      return this.finish(item, 'ready');
    } catch (error) {
      if (signal.aborted && !(signal.reason instanceof LeaseDeadline)) {
        await this.documents.releaseVectorLeases([leaseOf(item)]);
        return 'stale';
      }
      return this.fail(item, error);
    }
  }

  private async finish(item: VectorWorkRow, status: 'ready' | 'skipped' | 'removed') {
    const outcome = await this.documents.completeVectorWork(
      item.document_id,
      item.revision,
      item.lease,
      status,
    );
    if (outcome === 'lost') return this.lost(item);
    if (outcome === 'stale') {
      this.logger.debug(`${item.document_id} changed while it was processed: redoing it`);
      return 'stale';
    }
    return status;
  }

  private async fail(item: VectorWorkRow, error: unknown): Promise<SyncResult> {
    const message = error instanceof Error ? error.message : String(error);
    const retryMs = Math.round(
      Math.min(MAX_RETRY_MS, this.config.vectorRetryBaseMs * 2 ** (item.attempts - 1)) *
        (0.8 + Math.random() * 0.4),
    );
    const outcome = await this.documents.failVectorWork(
      item.document_id,
      item.revision,
      item.lease,
      message,
      { maxAttempts: this.config.vectorMaxAttempts, retryMs, errorRetryMs: ERROR_RETRY_MS },
    );
    if (outcome === 'retry') {
      this.logger.warn(
        `${item.document_id}: attempt ${item.attempts} failed, retrying in ${retryMs} ms: ${message}`,
      );
    } else if (outcome === 'error') {
      this.logger.error(
        `${item.document_id}: failed ${item.attempts} times, status error: ${message}`,
      );
    }
    return outcome === 'lost' ? this.lost(item) : outcome;
  }

  private lost(item: VectorWorkRow): SyncResult {
    this.logger.warn(`${item.document_id}: lease lost (expired and taken over); result dropped`);
    return 'stale';
  }

  private isSkipped(documentId: string): boolean {
    return this.config.vectorSkipPrefixes.some((prefix) => documentId.startsWith(prefix));
  }

  /** Milliseconds until the next retry or lease expiry (capped), `undefined` when none. */
  private async nextDue(): Promise<number | undefined> {
    try {
      const at = await this.documents.nextVectorWorkAt();
      return at === null
        ? undefined
        : Math.min(MAX_IDLE_MS, Math.max(10, at.getTime() - Date.now() + 20));
    } catch (error) {
      this.logger.warn(`reading the next retry time failed: ${String(error)}`);
      return QUEUE_ERROR_BASE_MS;
    }
  }

  private sleep(ms?: number): Promise<void> {
    if (this.wakeRequested || !this.running) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        this.wakeWaiter = undefined;
        resolve();
      };
      if (ms !== undefined) timer = setTimeout(done, ms);
      this.wakeWaiter = done;
    });
  }
}

function leaseOf(item: VectorWorkRow): { documentId: string; lease: string } {
  return { documentId: item.document_id, lease: item.lease };
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
