import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { isDatabaseUnavailable } from '../../database/database-errors';
import { escapeLike } from '../../documents/document-id';
import { EMBEDDER, Embedder } from '../embedders/embedder.interface';
import { storeDown } from '../stores/vector-store.interface';
import { ANALYZER_VERSION } from '../text/analyzer';
import { VectorBatchProcessor } from './vector-batch.processor';
import { QueueCursor, VectorQueueRepository } from './vector-queue.repository';

/** Documents read and indexed lexically at a time. */
const LEXICAL_BATCH = 64;
/**
 * Documents at a time of {@link LexicalFirstLane.catchUp}: a restore's thousands are read,
 * analysed and written in fewer, larger statements (a 4 KB document's batch is about 1 MB).
 */
const CATCH_UP_BATCH = 256;
/** Sleep when nothing is behind, unless woken sooner. */
const IDLE_MS = 5000;
/** Back off after a failure (PostgreSQL away, the chunking threads busy). */
const FAILURE_MS = 1000;
/**
 * The walk starts from the head of the queue again at least this often: a write whose
 * transaction began before the cursor's time and committed after is found then (the batches
 * would index it anyway, later).
 */
const RESCAN_MS = 60_000;

/**
 * The lexical pass of the pipeline, ahead of the embedder. The batches take pending
 * documents oldest first and index each lexically just before embedding it; with an embedding
 * model (a few documents a second on two cores) or a remote server, a document written
 * behind a backlog would wait minutes to be found by its words. This lane walks the pending
 * documents in queue order and writes the passages and lexical records of those whose record
 * is not of their revision, so that lexical search serves a new document within a second
 * whatever the embedding backlog; the batches then skip rewriting them (same revision).
 * Only with an embedder slower than chunking: with the hashing embedder the batches are as
 * fast as this pass would be. Several processes may run it: a record is written once per
 * revision whoever writes it first.
 *
 * At start, whatever the embedder, it also writes again the records another analyzer wrote
 * (a release that changed {@link ANALYZER_VERSION}), one server of several at a time: the
 * records depend on the analysis, the vectors do not (every embedder reads the passages'
 * text, which the chunker makes), so the documents keep their vectors and their place in the
 * queue, and nothing is embedded again. (A release that changes the chunking is another
 * matter: its documents must be embedded again, `POST /admin/vectors/reindex`.)
 */
@Injectable()
export class LexicalFirstLane implements OnModuleDestroy {
  private readonly logger = new Logger('LexicalFirstLane');
  private running = false;
  private loop: Promise<void> | undefined;
  private reanalysis: Promise<void> | undefined;
  private readonly catchUps = new Set<Promise<number>>();
  private readonly closing = new AbortController();
  private abort = new AbortController();
  private wakeRequested = false;
  private wakeWaiter: (() => void) | undefined;
  private storeDownLogged = 0;

  constructor(
    private readonly config: AppConfig,
    private readonly queue: VectorQueueRepository,
    private readonly processor: VectorBatchProcessor,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
  ) {}

  /** Whether this process's embedder is slow enough for the lane to matter. */
  get wanted(): boolean {
    return this.embedder.provider !== 'local';
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    this.reanalysis = this.reanalyse(this.abort.signal);
    if (this.wanted) this.loop = this.run();
  }

  /** Documents may be pending: look again (calls coalesce). */
  wake(): void {
    this.wakeRequested = true;
    this.wakeWaiter?.();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.abort.abort();
    this.wake();
    await Promise.all([this.loop, this.reanalysis]);
  }

  /**
   * Whether a failure of the analyzer pass will pass, the same batch to be tried again later:
   * stopping, PostgreSQL or the index's store away, the chunking threads' queue full.
   */
  private passing(error: unknown): boolean {
    return (
      !this.running ||
      isDatabaseUnavailable(error) ||
      storeDown(error) ||
      (error instanceof Error && error.message === 'Task queue is at limit')
    );
  }

  /** Writes again, lexically only, every record another analyzer wrote (see the class). */
  private async reanalyse(signal: AbortSignal): Promise<void> {
    const skipped = this.config.vectorSkipPrefixes.map((prefix) => `${escapeLike(prefix)}%`);
    let after = '';
    let indexed = 0;
    let release: (() => Promise<void>) | undefined;
    while (this.running) {
      try {
        // One server of several does it; the others leave it to that one. Nothing to do (every
        // start but the first of a release): no lock, no connection held.
        if (release === undefined) {
          if ((await this.queue.olderAnalyzer('', ANALYZER_VERSION, skipped, 1)).length === 0)
            return;
          if ((release = await this.queue.tryReanalysing(ANALYZER_VERSION)) === undefined) return;
        }
        const rows = await this.queue.olderAnalyzer(
          after,
          ANALYZER_VERSION,
          skipped,
          CATCH_UP_BATCH,
        );
        if (rows.length === 0) break;
        indexed += await this.processor.indexLexically(rows, signal).catch(async (error) => {
          if (this.passing(error)) throw error;
          // One document the batch cannot take (too large to chunk, say) must not hold up the
          // others for ever: one at a time, that one passed over (its next revision indexes it).
          let one = 0;
          for (const row of rows) {
            try {
              one += await this.processor.indexLexically([row], signal);
            } catch (failed) {
              if (this.passing(failed)) throw failed;
              this.logger.warn(
                `${row.document_id} not indexed again under the new analyzer: ${failed instanceof Error ? failed.message : String(failed)}`,
              );
            }
          }
          return one;
        });
        after = rows[rows.length - 1].document_id;
      } catch (error) {
        // PostgreSQL or the index's store away, the threads busy: the same batch again, a
        // second later.
        if (!this.running) break;
        if (!this.passing(error)) {
          this.logger.warn(
            `indexing again under the new analyzer: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
        await sleep(FAILURE_MS, undefined, { signal }).catch(() => undefined);
      }
    }
    await release?.();
    if (indexed > 0) {
      this.logger.log(
        `${indexed} documents indexed again lexically under a new text analyzer (their vectors kept)`,
      );
    }
  }

  private async run(): Promise<void> {
    const skipped = this.config.vectorSkipPrefixes.map((prefix) => `${escapeLike(prefix)}%`);
    let cursor: QueueCursor | null = null;
    let rescanAt = Date.now() + RESCAN_MS;
    while (this.running) {
      if (Date.now() >= rescanAt) {
        cursor = null;
        rescanAt = Date.now() + RESCAN_MS;
      }
      try {
        const done = await this.step(cursor, skipped, this.abort.signal);
        if (done === null) {
          cursor = null;
          await this.sleep(IDLE_MS);
          continue;
        }
        cursor = done.cursor;
      } catch (error) {
        if (!this.running) break;
        if (storeDown(error)) {
          // The index in Qdrant is not answering: the batches wait for it too; once a minute.
          if (Date.now() - this.storeDownLogged >= 60_000) {
            this.storeDownLogged = Date.now();
            this.logger.warn(`lexical pass waits for the index: ${(error as Error).message}`);
          }
          await this.sleep(IDLE_MS);
          continue;
        }
        if (!isDatabaseUnavailable(error)) {
          this.logger.warn(
            `lexical pass: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
        await this.sleep(FAILURE_MS);
      }
    }
  }

  /**
   * Indexes lexically every pending document whose record is not of its revision, now,
   * whether or not the lane runs (after a restore every document is pending and none is
   * indexed); resolves with how many it indexed, told after each batch to `onBatch`.
   * Failures are the caller's.
   *
   * The three stages of a batch use different resources, so they overlap: while one batch is
   * written (this loop and PostgreSQL), the next is analysed on the chunking threads and the
   * one after it read. The queue is walked from its end, away from the sync worker's claims.
   * `spare`: the cores the chunking threads leave to requests analyse too (after a restore
   * into an empty knowledge base, when little else is asked of them).
   */
  catchUp(
    onBatch: (indexed: number) => void = () => undefined,
    signal: AbortSignal = new AbortController().signal,
    spare = false,
  ): Promise<number> {
    // Ended by the application's stop too (a restore's pass goes on in the background).
    const pass = this.catchUpUntil(onBatch, AbortSignal.any([signal, this.closing.signal]), spare);
    this.catchUps.add(pass);
    const forget = () => this.catchUps.delete(pass);
    pass.then(forget, forget);
    return pass;
  }

  /**
   * Ends the catch-ups in flight (the lexical pass after a restore) and waits for them, so
   * that nothing writes to the index once the pipeline's modules have stopped.
   */
  async onModuleDestroy(): Promise<void> {
    this.closing.abort();
    await Promise.allSettled([...this.catchUps]);
  }

  private async catchUpUntil(
    onBatch: (indexed: number) => void,
    signal: AbortSignal,
    spare: boolean,
  ): Promise<number> {
    const skipped = this.config.vectorSkipPrefixes.map((prefix) => `${escapeLike(prefix)}%`);
    const read = (after: QueueCursor | null) =>
      this.queue.lexicalBehind(after, ANALYZER_VERSION, skipped, CATCH_UP_BATCH, true);
    let indexed = 0;
    let writing: Promise<void> = Promise.resolve();
    try {
      let rows = await read(null);
      while (rows.length > 0) {
        const last = rows[rows.length - 1];
        const next = read({ queuedAt: last.queued_at, documentId: last.document_id });
        // Awaited below; a failure meanwhile must not count as unhandled.
        next.catch(() => undefined);
        const write = await this.processor.analyseLexically(rows, signal, spare);
        await writing;
        writing = write().then((count) => onBatch((indexed += count)));
        writing.catch(() => undefined);
        rows = await next;
      }
      await writing;
    } finally {
      // A batch's write in flight when a later stage failed ends before the caller is told.
      await writing.catch(() => undefined);
    }
    return indexed;
  }

  /** One batch after `cursor`: how many it indexed and where it ended; `null` when none was behind. */
  private async step(
    cursor: QueueCursor | null,
    skipped: string[],
    signal: AbortSignal,
  ): Promise<{ cursor: QueueCursor; indexed: number } | null> {
    const rows = await this.queue.lexicalBehind(cursor, ANALYZER_VERSION, skipped, LEXICAL_BATCH);
    if (rows.length === 0) return null;
    const indexed = await this.processor.indexLexically(rows, signal);
    const last = rows[rows.length - 1];
    return { cursor: { queuedAt: last.queued_at, documentId: last.document_id }, indexed };
  }

  private async sleep(ms: number): Promise<void> {
    if (this.wakeRequested) {
      this.wakeRequested = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeWaiter = done;
    });
    this.wakeWaiter = undefined;
    this.wakeRequested = false;
  }
}
