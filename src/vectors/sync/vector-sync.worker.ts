import { Inject, Injectable, Logger } from '@nestjs/common';
import { type Backoff, backoffDelay } from '../../retry/backoff';
import { logFault } from '../../common/fault';
import { AppConfig } from '../../config/app-config';
import { isDatabaseUnavailable } from '../../database/database-errors';
import { DocumentsService } from '../../documents/documents.service';
import { EMBEDDER, Embedder } from '../embedders/embedder.interface';
import {
  BatchDeadline,
  BatchOutcome,
  leaseOf,
  VectorBatchProcessor,
} from './vector-batch.processor';
import { VectorQueueRepository, VectorWorkRow } from './vector-queue.repository';
import { VECTOR_STORE, VectorStore } from '../stores/vector-store.interface';
import { VectorStoreInitializer } from '../stores/vector-store.initializer';
import { LexicalFirstLane } from './lexical-first.lane';

/** Documents claimed and processed together (one embed call, one store write, one update). */
export const BATCH_DOCUMENTS = 16;
/**
 * How long a stopping worker lets batches in progress finish before aborting them, unless the
 * configuration says otherwise; and how long aborted ones get to give their documents back.
 */
const STOP_GRACE_MS = 5000;
/** Waits after the queue itself (PostgreSQL) failed, doubling up to the cap. */
const QUEUE_ERROR: Backoff = { firstMs: 100, maxMs: 1000, jitter: 0.2 };
/** Longest sleep before looking at a due retry again (clocks of servers may differ a little). */
const MAX_IDLE_MS = 60_000;
/**
 * How soon a claim that passed over pending documents (held by another transaction) looks
 * again: what held them may end without writing, and so without a notification.
 */
const LOCKED_RECHECK_MS = 1000;
/** A batch running this long is stuck (a hung request): it is aborted, counted as an attempt. */
const BATCH_DEADLINE_MS = 10 * 60 * 1000;
/** How often a failing embedder (or store) is asked whether it answers again. */
const DEPENDENCY_PROBE_MS = 2000;
const PROBE_TEXT = 'agent-data embedder probe';

interface Batch {
  readonly items: readonly VectorWorkRow[];
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

/**
 * The sync worker's loop: claims pending documents in batches (several workers and
 * processes share the queue through `FOR NO KEY UPDATE SKIP LOCKED` and a lease that keeps a
 * document with one worker until it is done, even across content changes) and hands each
 * batch to {@link VectorBatchProcessor}. At most `VECTOR_WORKER_CONCURRENCY` batches are in
 * progress at once.
 *
 * Leases are short (`VECTOR_LEASE_MS`, 15 s) and renewed every third of that while a batch
 * runs, so the documents of a worker that died are taken over within one lease. It sleeps
 * when the queue is empty and wakes on {@link wake} (a notification, a sweep, the listener
 * reconnecting), when a batch finishes, or when the next retry or lease expiry recorded in
 * the table is due. When PostgreSQL fails it retries within a second; when the embedder or
 * the vector store fails as a whole it stops claiming and asks it every 2 s, then gives every
 * waiting document its next attempt at once. {@link stop} lets batches finish for a
 * moment, then aborts them and gives their leases back, so nothing is left claimed.
 */
@Injectable()
export class VectorSyncWorker {
  private readonly logger = new Logger('VectorSyncWorker');
  private readonly batches = new Set<Batch>();
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeRequested = false;
  private wakeWaiter: (() => void) | undefined;
  private purges: Promise<void> = Promise.resolve();
  private stopping: Promise<void> = new Promise(() => undefined);
  private signalStop: () => void = () => undefined;
  /** While the embedder or the store is down: resolves once it answers again. */
  private dependencyDown: { what: 'embedder' | 'store'; back: Promise<void> } | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly documents: DocumentsService,
    private readonly queue: VectorQueueRepository,
    private readonly processor: VectorBatchProcessor,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    @Inject(VECTOR_STORE) private readonly store: VectorStore,
    private readonly stores: VectorStoreInitializer,
    private readonly lexicalFirst: LexicalFirstLane,
  ) {
    // A store that holds no vector of the documents needs every document embedded again.
    stores.onReset(async (why) => {
      const queued = await queue.requeueAll('');
      if (queued > 0) this.logger.warn(`${why}: ${queued} documents queued to be indexed again`);
    });
  }

  get state(): {
    running: boolean;
    in_progress: number;
    batches: number;
    concurrency: number;
    waiting_for_embedder: boolean;
    waiting_for_store: boolean;
  } {
    return {
      running: this.running,
      in_progress: [...this.batches].reduce((n, b) => n + b.items.length, 0),
      batches: this.batches.size,
      concurrency: this.config.vectorWorkerConcurrency,
      waiting_for_embedder: this.dependencyDown?.what === 'embedder',
      waiting_for_store: this.dependencyDown?.what === 'store',
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new Promise((resolve) => (this.signalStop = resolve));
    this.loop = this.run();
    this.lexicalFirst.start();
  }

  /** Something may be pending: look at the queue again (cheap; calls coalesce). */
  wake(): void {
    this.wakeRequested = true;
    this.wakeWaiter?.();
    this.lexicalFirst.wake();
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
        await this.store.deleteDocuments([documentId]);
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
    await Promise.all([this.loop, this.lexicalFirst.stop()]);
    const all = () => Promise.allSettled([...this.batches].map((b) => b.done));
    if (!(await settlesWithin(all(), this.config.pipelineStopGraceMs ?? STOP_GRACE_MS))) {
      this.logger.log(`stopping: aborting ${this.state.in_progress} documents in progress`);
      for (const batch of this.batches) batch.abort.abort();
      await settlesWithin(all(), STOP_GRACE_MS);
    }
    // Batches that did not wind down in time: their leases are given back here (a lease
    // already ended does not match and is left alone).
    const left = [...this.batches].flatMap((b) => b.items.map(leaseOf));
    if (left.length > 0) await this.queue.release(left).catch(() => 0);
    await this.purges;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      if (this.batches.size >= this.config.vectorWorkerConcurrency) {
        // Every slot busy: wait for a batch to finish (or for stop), whatever wakes arrive.
        await Promise.race([...[...this.batches].map((b) => b.done), this.stopping]);
        continue;
      }
      if (this.dependencyDown) {
        // Claiming now would only fail documents that are not at fault.
        await Promise.race([this.dependencyDown.back, this.stopping]);
        continue;
      }
      this.wakeRequested = false;
      let claimed: VectorWorkRow[];
      try {
        claimed = await this.queue.claim(BATCH_DOCUMENTS, this.config.vectorLeaseMs);
        failures = 0;
      } catch (error) {
        failures++;
        const wait = backoffDelay(failures - 1, QUEUE_ERROR);
        if (isDatabaseUnavailable(error)) logFault(this.logger, 'vector sync claim', error);
        else this.logger.warn(`claiming work failed (retry in ${wait} ms): ${String(error)}`);
        await this.sleep(wait);
        continue;
      }
      if (!this.running) {
        await this.queue.release(claimed.map(leaseOf)).catch(() => 0);
        break;
      }
      if (claimed.length > 0) this.begin(claimed);
      // A full batch means more may be waiting: claim again at once. A partial one means
      // the queue was empty: sleep until woken (a finishing batch wakes the loop). Nothing
      // at all: also wake when the next retry or lease expiry is due.
      if (claimed.length === BATCH_DOCUMENTS || this.wakeRequested) continue;
      await this.sleep(claimed.length === 0 ? await this.nextDue() : undefined);
    }
  }

  private begin(items: VectorWorkRow[]): void {
    const abort = new AbortController();
    const deadline = setTimeout(
      () => abort.abort(new BatchDeadline('the batch ran for 10 minutes')),
      BATCH_DEADLINE_MS,
    );
    // Renewed while it runs: a live worker keeps its documents, a dead one's expire soon.
    const heartbeat = setInterval(
      () =>
        void this.queue.renew(items.map(leaseOf), this.config.vectorLeaseMs).catch(() => undefined),
      Math.max(250, Math.floor(this.config.vectorLeaseMs / 3)),
    );
    const batch: Batch = {
      items,
      abort,
      done: this.processor
        .process(items, abort.signal)
        .then((outcome) => this.after(outcome))
        .finally(() => {
          clearTimeout(deadline);
          clearInterval(heartbeat);
          this.batches.delete(batch);
          this.wake();
        }),
    };
    this.batches.add(batch);
  }

  private after(outcome: BatchOutcome): void {
    if (this.dependencyDown !== undefined || !this.running) return;
    const what =
      outcome === 'embedder-down' ? 'embedder' : outcome === 'store-down' ? 'store' : undefined;
    if (what === undefined) return;
    this.dependencyDown = {
      what,
      back: this.waitFor(what).finally(() => (this.dependencyDown = undefined)),
    };
  }

  /**
   * Asks the embedder (or the store) every few seconds until it answers; then every document
   * waiting out a backoff gets its next attempt at once, and the loop claims again.
   */
  private async waitFor(what: 'embedder' | 'store'): Promise<void> {
    for (;;) {
      const stopped = await Promise.race([
        new Promise<false>((resolve) =>
          setTimeout(() => resolve(false), DEPENDENCY_PROBE_MS).unref(),
        ),
        this.stopping.then(() => true),
      ]);
      if (stopped || !this.running) return;
      try {
        if (what === 'embedder') await this.embedder.embed([PROBE_TEXT]);
        else {
          await this.stores.ready();
          const { ok } = await this.store.check();
          if (!ok) continue;
        }
        break;
      } catch {
        // still down: ask again
      }
    }
    this.logger.log(
      `the ${what === 'embedder' ? 'embedder' : 'vector store'} answers again: resuming`,
    );
    await this.queue.retryNow().catch(() => 0);
    this.wake();
  }

  /**
   * Milliseconds until the next retry, lease expiry or look at a document another transaction
   * held (capped), `undefined` when nothing is pending.
   */
  private async nextDue(): Promise<number | undefined> {
    try {
      const at = await this.queue.nextWorkAt(LOCKED_RECHECK_MS);
      return at === null
        ? undefined
        : Math.min(MAX_IDLE_MS, Math.max(10, at.getTime() - Date.now() + 20));
    } catch (error) {
      if (!isDatabaseUnavailable(error)) {
        this.logger.warn(`reading the next retry time failed: ${String(error)}`);
      }
      return QUEUE_ERROR.maxMs;
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

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
