import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { VectorLease, VectorWorkRow } from '../documents/documents.repository';
import { DocumentsService } from '../documents/documents.service';
import { EMBEDDER, Embedder, EmbeddingError } from './embedder.interface';
import { chunkMarkdown, ChunkerOptions, DEFAULT_CHUNKER_OPTIONS } from './markdown-chunker';
import { DocumentPoints, VECTOR_STORE, VectorStore } from './vector-store.interface';
import { VectorStoreInitializer } from './vector-store.initializer';
import { SyncResult, VectorsMetrics } from './vectors.metrics';

/** Longest wait between two retries of a failed document. */
const MAX_RETRY_MS = 5 * 60 * 1000;
/** When a document in `error` gets one more attempt (from the recovery sweep). */
const ERROR_RETRY_MS = 15 * 60 * 1000;

/** The reason a batch is aborted when its lease would run out before it is done. */
export class LeaseDeadline extends Error {}

/**
 * Takes one claimed batch of documents to the end: every document is completed, failed or
 * given back. Deleted documents lose their points (`removed`); skipped prefixes and empty
 * bodies get `skipped`; the others are chunked, embedded together (the embedder splits the
 * inputs into requests within the provider's limits), written to the store in one call,
 * and marked `ready` only where the revision embedded is still current (the others stay
 * pending and are redone). Three statements for the whole batch, whatever its size.
 *
 * When a batch fails for a reason that may belong to one document (a 4xx from the
 * embedder, a write refused), its documents are redone one by one, so one bad document
 * does not hold back the others. A provider-wide failure (rate limit, 5xx, timeout) fails
 * them all at once instead of sending one request per document to a server in trouble.
 */
@Injectable()
export class VectorBatchProcessor {
  private readonly logger = new Logger('VectorSyncWorker');
  private readonly chunker: ChunkerOptions;

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

  /** Never rejects: a failure of the bookkeeping itself leaves leases to expire (the sweep). */
  async process(items: readonly VectorWorkRow[], signal: AbortSignal): Promise<void> {
    try {
      await this.run(items, signal);
    } catch (error) {
      this.logger.error(
        `batch of ${items.length} left to its leases (they expire and the sweep re-queues it): ${String(error)}`,
      );
    }
  }

  private async run(items: readonly VectorWorkRow[], signal: AbortSignal): Promise<void> {
    try {
      await this.stores.ready();
      const removed = items.filter((i) => i.deleted);
      const skipped = items.filter((i) => !i.deleted && this.isSkipped(i));
      const embeddable = items.filter((i) => !i.deleted && !this.isSkipped(i));
      await this.store.deleteDocuments([...removed, ...skipped].map((i) => i.document_id));

      const prepared = embeddable.map((item) => ({
        item,
        chunks: chunkMarkdown(item.body, item.title, this.chunker),
      }));
      const texts = prepared.flatMap((p) => p.chunks.map((c) => c.text));
      const vectors = texts.length > 0 ? await this.embedder.embed(texts, { signal }) : [];
      signal.throwIfAborted();

      // Documents changed (or lost) while they were embedded are not written: their next
      // revision is on its way and would only replace these vectors again.
      const current = await this.documents.vectorLeaseRevisions(embeddable.map(leaseOf));
      const points: DocumentPoints[] = [];
      let at = 0;
      for (const { item, chunks } of prepared) {
        const own = vectors.slice(at, (at += chunks.length));
        if (current.get(item.document_id) !== item.revision) continue;
        points.push({
          documentId: item.document_id,
          revision: item.revision,
          title: item.title,
          tags: item.tags,
          chunks: chunks.map((chunk, i) => ({
            chunkIndex: chunk.index,
            vector: own[i],
            heading: chunk.headings.join(' › '),
            content: chunk.content,
          })),
        });
      }
      await this.store.replaceDocuments(points);

      const statuses = new Map<string, 'ready' | 'skipped' | 'removed'>([
        ...removed.map((i) => [i.document_id, 'removed'] as const),
        ...skipped.map((i) => [i.document_id, 'skipped'] as const),
        ...embeddable.map((i) => [i.document_id, 'ready'] as const),
      ]);
      const outcomes = await this.documents.completeVectorWork(
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
    } catch (error) {
      if (signal.aborted && !(signal.reason instanceof LeaseDeadline)) {
        // Stopping: the documents go back to the queue for another worker.
        await this.documents.releaseVectorLeases(items.map(leaseOf));
        return;
      }
      if (items.length > 1 && !(error instanceof EmbeddingError && error.transient)) {
        this.logger.warn(
          `batch of ${items.length} failed (${String(error)}): redoing its documents one by one`,
        );
        for (const item of items) await this.run([item], signal);
        return;
      }
      for (const item of items) await this.fail(item, error);
    }
  }

  private async fail(item: VectorWorkRow, error: unknown): Promise<void> {
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
    } else if (outcome === 'lost') {
      this.lost(item);
    }
    this.count(outcome === 'lost' ? 'stale' : outcome);
  }

  private lost(item: VectorWorkRow): void {
    this.logger.warn(`${item.document_id}: lease lost (expired and taken over); result dropped`);
  }

  private count(result: SyncResult): void {
    this.metrics.documents.inc({ result });
  }

  private isSkipped(item: VectorWorkRow): boolean {
    return (
      item.body.trim() === '' ||
      this.config.vectorSkipPrefixes.some((prefix) => item.document_id.startsWith(prefix))
    );
  }
}

export function leaseOf(item: VectorWorkRow): VectorLease {
  return { documentId: item.document_id, lease: item.lease };
}
