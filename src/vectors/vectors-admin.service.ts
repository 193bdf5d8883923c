import { AnchorFieldsJob } from './sync/anchor-fields.job';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { QdrantLexicalIndex } from './stores/qdrant/qdrant-lexical.index';
import { safeMessage } from '../common/fault';
import { TermTable } from './search/term-table';
import { QdrantSemantic } from './stores/qdrant/qdrant-semantic';
import { callVectorWorker } from '../cluster/vector-worker.client';
import { AppConfig } from '../config/app-config';
import type { Access } from '../documents/access';
import { escapeLike, validatePrefix } from '../documents/document-id';
import { ANALYZER_VERSION } from './text/analyzer';
import { LexicalStore } from './lexical/lexical.store';
import { LexicalFirstLane } from './sync/lexical-first.lane';
import { VectorQueueRepository } from './sync/vector-queue.repository';
import { VectorQueueStatus } from './sync/vector-queue-status.repository';
import { EMBEDDER, Embedder } from './embedders/embedder.interface';
import { Recounted } from './recounted';
import { EmbeddingsChoice } from '../config/embeddings-choice';
import { VectorSyncListener } from './sync/vector-sync.listener';
import { VectorSyncWorker } from './sync/vector-sync.worker';
import { VECTOR_STORE, VectorStore } from './stores/vector-store.interface';
import { VectorStoreInitializer } from './stores/vector-store.initializer';
import type { ReindexResult, VectorQueueReport, VectorsStatus } from './vectors-admin.schemas';

/** What the admin endpoints under `/admin/vectors` do. */
@Injectable()
export class VectorsAdminService {
  constructor(
    private readonly config: AppConfig,
    private readonly queue: VectorQueueRepository,
    private readonly queueStatus: VectorQueueStatus,
    private readonly listener: VectorSyncListener,
    private readonly worker: VectorSyncWorker,
    private readonly stores: VectorStoreInitializer,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    @Inject(VECTOR_STORE) private readonly store: VectorStore,
    private readonly lexical: LexicalStore,
    private readonly choice: EmbeddingsChoice,
    private readonly lane: LexicalFirstLane,
    private readonly terms: TermTable,
    private readonly anchors: AnchorFieldsJob,
    @Optional() @Inject(QdrantSemantic) private readonly semantic: QdrantSemantic | null,
    @Optional() @Inject(QdrantLexicalIndex) private readonly qdrantIndex: QdrantLexicalIndex | null,
  ) {}

  private readonly logger = new Logger('VectorsAdminService');
  /**
   * What the status counts over every document: counted for the answer on a small knowledge
   * base; on a large one, where each count reads the whole table, the last count, counted again
   * in the background now and then (docs/performance.md, "Costs that grow with the
   * documents"). The restore's answer counts the coverage itself, exactly.
   */
  private readonly counted = new Recounted(
    async () => {
      const [{ counts, leased }, coverage] = await Promise.all([
        this.queueStatus.statusCounts(),
        this.lexicalCoverage(),
      ]);
      return { counts, leased, coverage };
    },
    ({ counts }) => Object.values(counts).reduce((sum, n) => sum + n, 0),
  );

  /** Counts per status, lag, listener, worker, embedder, store and lexical index, the next errors. */
  async status(access: Access): Promise<VectorsStatus> {
    if (this.config.clusterRole === 'web') {
      // The pipeline, the index and the embedder are the vector worker's: it tells.
      return callVectorWorker('status', { access: { read: access.read, write: access.write } });
    }
    const [counted, pending, errors, collection, lexical, anchorsDue] = await Promise.all([
      this.counted.read(),
      this.queueStatus.pending(),
      // Only documents the caller may read are named.
      this.queueStatus.errors(10, access.readablePatterns() ?? null),
      this.store.report?.().catch((error: Error) => ({ error: safeMessage(error.message) })),
      this.lexicalReport(),
      this.anchors.due(),
    ]);
    const { counts, leased, coverage } = counted.value;
    const report: VectorQueueReport = {
      counts,
      leased,
      counts_age_seconds: Math.max(0, Math.floor((Date.now() - counted.countedAt) / 1000)),
      lag_seconds: pending.lagSeconds,
      errors: errors.map((row) => ({
        document_id: row.document_id,
        // A store's or an embedder's message may name an internal address: not shown.
        error: row.error === null ? null : safeMessage(row.error),
        attempts: row.attempts,
        next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
      })),
    };
    const health = this.embedder.health();
    return {
      sync_enabled: this.config.vectorSyncEnabled,
      // In cluster mode (WEB_CONCURRENCY) the `vector` worker answers: it runs them all.
      cluster_role: this.config.clusterRole,
      ...report,
      listener: this.listener.state,
      worker: this.worker.state,
      embedder: {
        provider: this.embedder.provider,
        model: this.embedder.model,
        dimensions: this.embedder.dimensions,
        ok: health.ok,
        last_success_at: health.lastSuccessAt,
        last_error: health.lastError,
        ...this.embedder.details?.(),
        chosen: this.choice.reason,
      },
      store: {
        ...this.store.describe(),
        ready: this.stores.isReady,
        error: this.stores.error,
        ...(collection ? { collection } : {}),
      },
      lexical,
      lexical_coverage: coverage,
      anchor_fields: { due: anchorsDue },
    };
  }

  /**
   * Where the lexical side is indexed and what it holds: this process's copy and its
   * semantic model, or the documents indexed in Qdrant (counted in PostgreSQL) and the model
   * whose vectors Qdrant holds.
   */
  private async lexicalReport(): Promise<VectorsStatus['lexical']> {
    if (this.lexical.where === 'local') {
      const stats = this.lexical.stats;
      // Before the first search loads this server's copy, what it will hold is what is indexed
      // in PostgreSQL: "0 documents" read as nothing indexed.
      const documents = stats.loaded ? stats.documents : (await this.lexical.totals()).documents;
      return {
        store: 'local',
        ...stats,
        documents,
        semantic_model: this.lexical.semanticModel ?? null,
        term_frequencies: this.terms.describe(),
      };
    }
    const [totals, semantic] = await Promise.all([
      this.lexical.totals(),
      this.semantic?.describe().catch((error: Error) => ({
        documents: null,
        sample: null,
        terms: null,
        dimensions: null,
        error: safeMessage(error.message),
      })),
    ]);
    return {
      store: 'qdrant',
      loaded: false,
      documents: totals.documents,
      terms: 0,
      postings: 0,
      semantic_model: semantic ?? null,
      term_frequencies: this.terms.describe(),
    };
  }

  /** Queues the documents under `prefix` that `access` may read to be embedded again. */
  async reindex(prefix: string | undefined, access: Access): Promise<ReindexResult> {
    const queued = await this.queue.requeueAll(
      validatePrefix(prefix),
      access.readablePatterns() ?? null,
    );
    // In Qdrant, each document's own point (its lexical side) is written again from its
    // record, in the background: the pipeline rewrites only what changed.
    if (this.qdrantIndex && access.readablePatterns() === undefined) {
      void this.qdrantIndex
        .rewrite(this.lexical, { prefix: validatePrefix(prefix) ?? '' })
        .catch((error: Error) => this.logger.warn(`reindex in Qdrant: ${error.message}`));
    }
    // The statement also notified every listener; this covers a process whose listener is down.
    if (this.config.vectorWorkHere) this.worker.wake();
    return { queued, prefix: prefix ?? null };
  }

  /**
   * Indexes lexically, now and in this process, every pending document not indexed at its
   * revision (after a restore: all of them), so that search finds them before the pipeline
   * embeds them; how many (so far: `onBatch`). Nothing when the pipeline is off
   * (VECTOR_SYNC_ENABLED=false).
   */
  async indexLexicallyNow(onBatch?: (indexed: number) => void): Promise<number> {
    if (!this.config.vectorSyncEnabled) return 0;
    // Every core: the knowledge base was empty a moment ago, and the threads yield to requests
    // (they run niced).
    const indexed = await this.lane.catchUp(onBatch, undefined, true);
    if (this.config.vectorWorkHere) this.worker.wake();
    return indexed;
  }

  /**
   * Of the documents lexical search should find, how many it finds: those indexed at their
   * revision, by the lexical pass or by the pipeline's batches.
   */
  async lexicalCoverage(): Promise<{ indexed: number; indexable: number }> {
    const skipped = this.config.vectorSkipPrefixes.map((prefix) => `${escapeLike(prefix)}%`);
    return this.queueStatus.lexicalCoverage(ANALYZER_VERSION, skipped);
  }
}
