import { Inject, Injectable, Logger } from '@nestjs/common';
import { type Backoff, backoffDelay } from '../../retry/backoff';
import { logFault } from '../../common/fault';
import { AppConfig } from '../../config/app-config';
import { isDatabaseUnavailable } from '../../database/database-errors';
import { EMBEDDER, Embedder, EmbeddingError } from '../embedders/embedder.interface';
import { ChunkerOptions, DEFAULT_CHUNKER_OPTIONS } from '../work/markdown-chunker';
import { LexicalStore } from '../lexical/lexical.store';
import {
  LexicalWorkRow,
  VectorLease,
  VectorQueueRepository,
  VectorWorkRow,
} from './vector-queue.repository';
import type { PreparedChunk } from '../work/vector-work';
import type { LexicalRecord } from '../lexical/lexical-record';
import {
  DocumentPoints,
  storeDown,
  VECTOR_STORE,
  VectorStore,
} from '../stores/vector-store.interface';
import { VectorStoreInitializer } from '../stores/vector-store.initializer';
import { EmbedderMetrics } from '../embedders/embedder.metrics';
import { SyncResult, VectorSyncMetrics } from './vector-sync.metrics';
import { VectorWorkPool } from '../work/vector-work.pool';

/** Longest wait between two retries of a failed document. */
const MAX_RETRY_MS = 2 * 60 * 1000;
/** Waits between attempts to give leases back while PostgreSQL is down. */
const RELEASE_RETRY: Backoff = { firstMs: 250, maxMs: 2000, jitter: 0.2 };

/** The reason a batch is aborted when it runs far longer than any batch should. */
export class BatchDeadline extends Error {}

/**
 * How a batch ended, for the worker's pacing: `done` (every document completed, failed or
 * redone), `database-down`, `embedder-down` and `store-down` (given back to the queue without
 * counting an attempt: the documents are not at fault), `stopped` (aborted by a stopping
 * worker).
 */
export type BatchOutcome = 'done' | 'database-down' | 'embedder-down' | 'store-down' | 'stopped';

/**
 * Takes one claimed batch of documents to the end: every document is completed, failed or
 * given back. Deleted documents lose their points (`removed`); skipped prefixes and empty
 * bodies get `skipped`; the others are chunked (and, with the local embedder, embedded) on
 * the worker threads of {@link VectorWorkPool}, embedded together otherwise, written to the
 * store in one call, and marked `ready` only where the revision embedded is still current.
 *
 * Failures are told apart by who is at fault. PostgreSQL unreachable, the vector store
 * (Qdrant) not answering, or the embedder failing as a whole (rate limit, 5xx, network,
 * timeout): the batch is given back to the queue at once, without counting an attempt, and
 * the worker waits for the dependency to return. Anything that may belong to one document (a 4xx from the embedder, a write
 * refused): the batch is redone one document at a time, and a failing document is retried
 * with a capped backoff, then marked `error`.
 */
@Injectable()
export class VectorBatchProcessor {
  private readonly logger = new Logger('VectorBatchProcessor');
  private readonly chunker: ChunkerOptions;

  constructor(
    private readonly config: AppConfig,
    private readonly queue: VectorQueueRepository,
    private readonly lexical: LexicalStore,
    private readonly pool: VectorWorkPool,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    @Inject(VECTOR_STORE) private readonly store: VectorStore,
    private readonly stores: VectorStoreInitializer,
    private readonly metrics: VectorSyncMetrics,
    private readonly embedderMetrics: EmbedderMetrics,
  ) {
    // A model with a short window (an embedding model's 512 tokens) gets chunks that fit it.
    this.chunker = {
      ...DEFAULT_CHUNKER_OPTIONS,
      targetTokens: Math.min(DEFAULT_CHUNKER_OPTIONS.targetTokens, embedder.maxInputTokens),
      maxTokens: embedder.maxInputTokens,
    };
  }

  /** Never rejects. */
  async process(items: readonly VectorWorkRow[], signal: AbortSignal): Promise<BatchOutcome> {
    try {
      return await this.run(items, signal);
    } catch (error) {
      // The bookkeeping itself failed (recording a failure while PostgreSQL went away).
      if (isDatabaseUnavailable(error)) logFault(this.logger, 'vector sync', error);
      else this.logger.error(`batch of ${items.length} failed to be recorded: ${String(error)}`);
      await this.giveBack(items, signal);
      return isDatabaseUnavailable(error) ? 'database-down' : 'done';
    }
  }

  private async run(items: readonly VectorWorkRow[], signal: AbortSignal): Promise<BatchOutcome> {
    try {
      const removed = items.filter((i) => i.deleted);
      const skipped = items.filter((i) => !i.deleted && this.isSkipped(i));
      const embeddable = items.filter((i) => !i.deleted && !this.isSkipped(i));
      const gone = [...removed, ...skipped].map((i) => i.document_id);

      const local = this.embedder.provider === 'local' ? this.embedder.dimensions : undefined;
      const stop =
        local && this.embedderMetrics.embeddingDuration.startTimer({ provider: 'local' });
      const prepared = await this.pool.prepare(
        embeddable.map((i) => ({ id: i.document_id, title: i.title, body: i.body })),
        this.chunker,
        local,
        signal,
      );
      if (stop) {
        // Chunked and embedded in one pass on the worker threads: one local embedding request.
        stop();
        this.embedderMetrics.embeddingRequests.inc({ provider: 'local', outcome: 'success' });
        this.embedder.recordSuccess?.();
      }
      const headings = headingsOf(prepared.chunks);
      // Lexical search gets the passages and terms before the store and the embedder are
      // asked: it keeps up even while either is down. Removed and skipped documents lose theirs.
      await this.writeLexical(embeddable, prepared, headings, gone);
      // Lexical search is current from here on, even if the store or the embedder fails.
      await this.stores.ready();
      await this.store.deleteDocuments(gone);
      const vectors =
        prepared.vectors ??
        (await this.embed(
          // Chunked only (no local embedding): every chunk came back with its text.
          prepared.chunks.flat().map((chunk) => chunk.text!),
          prepared.chunks.flat().map((chunk) => chunk.tokens),
          signal,
        ));
      signal.throwIfAborted();

      // Documents changed (or lost) while they were embedded are not written: their next
      // revision is on its way and would only replace these vectors again.
      const current = await this.queue.leaseRevisions(embeddable.map(leaseOf));
      const points: DocumentPoints[] = [];
      let at = 0;
      embeddable.forEach((item, i) => {
        const chunks = prepared.chunks[i];
        const own = vectors.slice(at, (at += chunks.length));
        if (current.get(item.document_id) !== item.revision) return;
        points.push({
          documentId: item.document_id,
          revision: item.revision,
          title: item.title,
          tags: item.tags,
          chunks: chunks.map((chunk, k) => ({
            chunkIndex: chunk.index,
            vector: own[k],
            heading: headings[i][k],
            content: chunk.content,
          })),
        });
      });
      await this.store.replaceDocuments(points);

      const statuses = new Map<string, 'ready' | 'skipped' | 'removed'>([
        ...removed.map((i) => [i.document_id, 'removed'] as const),
        ...skipped.map((i) => [i.document_id, 'skipped'] as const),
        ...embeddable.map((i) => [i.document_id, 'ready'] as const),
      ]);
      const outcomes = await this.queue.complete(
        items.map((item) => ({
          ...leaseOf(item),
          revision: item.revision,
          status: statuses.get(item.document_id)!,
        })),
      );
      for (const item of items) {
        const outcome = outcomes.get(item.document_id);
        if (outcome === 'lost') this.lost(item);
        this.count(outcome === 'done' ? statuses.get(item.document_id)! : 'stale');
      }
      return 'done';
    } catch (error) {
      if (signal.aborted && !(signal.reason instanceof BatchDeadline)) {
        // Stopping: the documents go back to the queue for another worker.
        await this.giveBack(items, signal);
        return 'stopped';
      }
      if (isDatabaseUnavailable(error)) {
        logFault(this.logger, 'vector sync', error);
        await this.giveBack(items, signal);
        return 'database-down';
      }
      if (storeDown(error)) {
        this.logger.warn(
          `the vector store is not answering (${(error as Error).message}): ${items.length} documents back to the queue until it answers again`,
        );
        await this.giveBack(items, signal);
        return 'store-down';
      }
      if (error instanceof EmbeddingError && error.transient) {
        this.logger.warn(
          `the embedder is failing (${error.message}): ${items.length} documents back to the queue until it answers again`,
        );
        await this.giveBack(items, signal);
        return 'embedder-down';
      }
      if (items.length > 1) {
        this.logger.warn(
          `batch of ${items.length} failed (${String(error)}): redoing its documents one by one`,
        );
        let outcome: BatchOutcome = 'done';
        for (const [i, item] of items.entries()) {
          outcome = await this.run([item], signal);
          if (outcome !== 'done') {
            // The rest waits, untouched by this attempt, for the dependency to return.
            await this.giveBack(items.slice(i + 1), signal);
            break;
          }
        }
        return outcome;
      }
      for (const item of items) await this.fail(item, error);
      return 'done';
    }
  }

  /**
   * The lexical pass alone (lexical-first.lane.ts): chunks and analyses `items` and writes
   * their passages and lexical records, so that they are found by their words before the
   * embedder, slower by far, gets to them. Skipped documents are left to the batches.
   */
  async indexLexically(items: readonly LexicalWorkRow[], signal: AbortSignal): Promise<number> {
    return (await this.analyseLexically(items, signal))();
  }

  /**
   * The first half of {@link indexLexically}, on the chunking threads (and with `spare`, on
   * threads of the cores they leave to requests too): resolves with what writes the result
   * (on this loop and PostgreSQL) and resolves with how many documents it indexed, so that a
   * caller can analyse the next documents while these are written.
   */
  async analyseLexically(
    items: readonly LexicalWorkRow[],
    signal: AbortSignal,
    spare = false,
  ): Promise<() => Promise<number>> {
    const indexable = items.filter((item) => !this.isSkipped(item));
    if (indexable.length === 0) return () => Promise.resolve(0);
    const prepared = await this.pool.prepare(
      indexable.map((i) => ({ id: i.document_id, title: i.title, body: i.body })),
      this.chunker,
      undefined,
      signal,
      spare,
    );
    // The documents written: one deleted, or indexed at a newer revision meanwhile, is not.
    return () => this.writeLexical(indexable, prepared, headingsOf(prepared.chunks), []);
  }

  private async writeLexical(
    items: ReadonlyArray<Pick<VectorWorkRow, 'document_id' | 'revision' | 'tags'>>,
    prepared: { chunks: PreparedChunk[][]; records: LexicalRecord[] },
    headings: string[][],
    gone: readonly string[],
  ): Promise<number> {
    return this.lexical.write(
      items.map((item, i) => ({
        documentId: item.document_id,
        revision: item.revision,
        tags: item.tags,
        passages: prepared.chunks[i].map((chunk, k) => ({
          index: chunk.index,
          heading: headings[i][k],
          content: chunk.content,
        })),
        record: prepared.records[i],
      })),
      gone,
    );
  }

  private async embed(
    texts: string[],
    tokens: number[],
    signal: AbortSignal,
  ): Promise<Float32Array[]> {
    return texts.length > 0 ? this.embedder.embed(texts, { signal, tokens }) : [];
  }

  private async fail(item: VectorWorkRow, error: unknown): Promise<void> {
    // Stored errors stay short and single-line for the status endpoint and logs.
    const message = (error instanceof Error ? error.message : String(error))
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 1000);
    const retryMs = backoffDelay(item.attempts - 1, {
      firstMs: this.config.vectorRetryBaseMs,
      maxMs: MAX_RETRY_MS,
      jitter: 0.2,
    });
    const outcome = await this.queue.fail({ ...leaseOf(item), revision: item.revision }, message, {
      maxAttempts: this.config.vectorMaxAttempts,
      retryMs,
    });
    if (outcome === 'retry') {
      this.logger.warn(
        `${item.document_id}: attempt ${item.attempts} failed, retrying in ${retryMs} ms: ${message}`,
      );
    } else if (outcome === 'error') {
      this.logger.error(
        `${item.document_id}: failed ${item.attempts} times, status error: ${message}`,
      );
    } else if (outcome === 'lost') {
      this.lost(item);
    }
    this.count(outcome === 'lost' ? 'stale' : outcome);
  }

  /**
   * Gives the documents back to the queue without counting the attempt. While PostgreSQL
   * is unreachable it keeps trying (capped backoff) for as long as the leases last: once
   * they have expired, any worker may claim the documents anyway. A stopping worker tries
   * once.
   */
  private async giveBack(items: readonly VectorWorkRow[], signal: AbortSignal): Promise<void> {
    if (items.length === 0) return;
    const leases: VectorLease[] = items.map(leaseOf);
    const until = Date.now() + this.config.vectorLeaseMs;
    for (let attempt = 0; ; attempt++) {
      const wait = backoffDelay(attempt, RELEASE_RETRY);
      try {
        await this.queue.release(leases);
        for (let i = 0; i < items.length; i++) this.count('released');
        return;
      } catch (error) {
        const stopping = signal.aborted && !(signal.reason instanceof BatchDeadline);
        if (!isDatabaseUnavailable(error) || stopping || Date.now() + wait > until) {
          this.logger.warn(
            `${items.length} documents not given back (${String(error)}): their leases expire in at most ${this.config.vectorLeaseMs} ms`,
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  private lost(item: VectorWorkRow): void {
    this.logger.warn(`${item.document_id}: lease lost (expired and taken over); result dropped`);
  }

  private count(result: SyncResult): void {
    this.metrics.documents.inc({ result });
  }

  private isSkipped(item: Pick<VectorWorkRow, 'document_id' | 'body'>): boolean {
    return (
      item.body.trim() === '' ||
      this.config.vectorSkipPrefixes.some((prefix) => item.document_id.startsWith(prefix))
    );
  }
}

/** Each chunk's heading path as shown (`Guide › Install`). */
function headingsOf(chunks: readonly PreparedChunk[][]): string[][] {
  return chunks.map((list) => list.map((chunk) => chunk.headings.join(' › ')));
}

export function leaseOf(item: VectorWorkRow): VectorLease {
  return { documentId: item.document_id, lease: item.lease };
}
