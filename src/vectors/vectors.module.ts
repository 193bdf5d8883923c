import { AnchorFieldsJob } from './sync/anchor-fields.job';
import {
  Inject,
  Logger,
  Module,
  OnApplicationBootstrap,
  OnModuleDestroy,
  Optional,
} from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AppConfig } from '../config/app-config';
import { DocumentsModule } from '../documents/documents.module';
import { EmbedderMetrics } from './embedders/embedder.metrics';
import { warmTokenizer } from './embedders/tokenizer';
import { LexicalStore } from './lexical/lexical.store';
import { LSA_TRAINER } from './semantic/lsa';
import { SearchController } from './search/search.controller';
import { SearchMetrics } from './search/search.metrics';
import { SearchService } from './search/search.service';
import { TermTable } from './search/term-table';
import { VectorStoreInitializer } from './stores/vector-store.initializer';
import { VECTOR_STORE, VectorStore } from './stores/vector-store.interface';
import { VectorBatchProcessor } from './sync/vector-batch.processor';
import { VectorQueueMetrics } from './sync/vector-queue.metrics';
import { VectorQueueRepository } from './sync/vector-queue.repository';
import { VectorQueueStatus } from './sync/vector-queue-status.repository';
import { VectorRecoverySweep } from './sync/vector-recovery.sweep';
import { VectorSyncListener } from './sync/vector-sync.listener';
import { VectorSyncMetrics } from './sync/vector-sync.metrics';
import { VectorSyncWorker } from './sync/vector-sync.worker';
import { LexicalFirstLane } from './sync/lexical-first.lane';
import { VectorsAdminController } from './vectors-admin.controller';
import { VectorsAdminService } from './vectors-admin.service';
import { VectorsHealth } from './vectors.health';
import {
  embedderProvider,
  lexicalMirrorProvider,
  qdrantLexicalIndexProvider,
  qdrantSemanticProvider,
  searchSidesProvider,
  vectorStoreProvider,
} from './vectors.providers';
import { embeddingsChoiceProvider } from '../config/embeddings-choice';
import { EMBEDDER, Embedder } from './embedders/embedder.interface';
import { OnnxEmbedder } from './embedders/onnx.embedder';
import { VectorWorkPool } from './work/vector-work.pool';
import { VectorWorkerCalls } from './vector-worker.calls';
import { QdrantSemantic } from './stores/qdrant/qdrant-semantic';
import { QdrantLexicalIndex } from './stores/qdrant/qdrant-lexical.index';

/**
 * Search and the pipeline that makes documents searchable, one folder per role:
 * - `embedders/`: text to vectors (`EMBEDDER`: local feature hashing or any OpenAI-compatible
 *   server);
 * - `stores/`: where vectors live (`VECTOR_STORE`: PostgreSQL or Qdrant);
 * - `lexical/`: the lexical index (each document's analysed terms in PostgreSQL, an
 *   in-memory copy on every server ranked by BM25, the passages shown in results);
 * - `text/`: the text analysis both the index and queries use;
 * - `sync/`: how a write becomes searchable (the queue over the `vector_*` columns, the
 *   LISTEN/NOTIFY listener, the worker and its batches, the recovery sweep);
 * - `work/`: the CPU work of sync on worker threads (markdown chunking, text analysis, local
 *   hashing);
 * - `search/`: how a query is ranked (lexical and vector sides, fusion, snippets, `GET /search`).
 * Dependencies run sync → stores, lexical ← search, all using embedders and text (checked by
 * `npm run lint`).
 * This folder wires them and serves the admin endpoints and the health checks.
 * With VECTOR_SYNC_ENABLED=false the listener, worker and sweep do not run; search still
 * answers from what is indexed. In a web worker of a cluster nothing here loads: searches
 * and the status are asked of the vector worker (vector-worker.calls.ts).
 */
@Module({
  imports: [ScheduleModule.forRoot(), DocumentsModule],
  controllers: [SearchController, VectorsAdminController],
  providers: [
    EmbedderMetrics,
    SearchMetrics,
    VectorSyncMetrics,
    VectorQueueRepository,
    VectorQueueStatus,
    LexicalStore,
    VectorQueueMetrics,
    VectorWorkPool,
    { provide: LSA_TRAINER, useExisting: VectorWorkPool },
    embeddingsChoiceProvider,
    embedderProvider,
    vectorStoreProvider,
    qdrantLexicalIndexProvider,
    qdrantSemanticProvider,
    lexicalMirrorProvider,
    searchSidesProvider,
    VectorStoreInitializer,
    VectorBatchProcessor,
    LexicalFirstLane,
    VectorSyncWorker,
    VectorSyncListener,
    VectorRecoverySweep,
    SearchService,
    TermTable,
    VectorsAdminService,
    VectorsHealth,
    VectorWorkerCalls,
    AnchorFieldsJob,
  ],
  exports: [SearchService, VectorsAdminService],
})
export class VectorsModule implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('VectorsModule');

  constructor(
    private readonly config: AppConfig,
    private readonly stores: VectorStoreInitializer,
    private readonly worker: VectorSyncWorker,
    private readonly listener: VectorSyncListener,
    private readonly sweep: VectorRecoverySweep,
    @Inject(VECTOR_STORE) private readonly store: VectorStore,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    @Optional() @Inject(QdrantSemantic) private readonly semantic: QdrantSemantic | null,
    @Optional() @Inject(QdrantLexicalIndex) private readonly qdrantIndex: QdrantLexicalIndex | null,
    private readonly lexical: LexicalStore,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.clusterRole === 'web') {
      this.logger.log('search and vector work run in the vector worker of this cluster');
      return;
    }
    // An embedding model loads on its thread after start-up: liveness and MCP handshakes
    // never wait for it (a first search does, for a moment).
    if (this.embedder instanceof OnnxEmbedder) void this.embedder.load();
    const index = this.qdrantIndex;
    if (index) {
      // A collection made anew holds no document's point: each is written from its record,
      // in the background (the passages' vectors are the pipeline's, queued again).
      this.stores.onReset(async (why) => {
        void index
          .rewrite(this.lexical)
          .then((written) => {
            if (written > 0)
              this.logger.log(`${why}: the lexical side of ${written} documents written`);
          })
          .catch((error: Error) =>
            this.logger.warn(`the lexical side not written again (${why}): ${error.message}`),
          );
      });
    }
    // A store that is down (Qdrant restarting) must not keep the server from starting:
    // documents work without it, and the worker and search try again on use.
    await this.stores
      .ready()
      .catch((error: Error) =>
        this.logger.warn(`vector store not ready yet, retried on use: ${error.message}`),
      );
    // Only the OpenAI embedder counts tokens on this thread (search queries; chunks come
    // counted from the worker threads): load the tokenizer now rather than on a first search.
    if (this.config.embeddingsProvider === 'openai') warmTokenizer();
    if (!this.config.vectorSyncEnabled) {
      this.logger.log('vector sync is disabled (VECTOR_SYNC_ENABLED=false)');
      return;
    }
    this.worker.start();
    await this.listener.start();
    this.sweep.start();
    this.semantic?.start();
  }

  /** Runs before the database pool closes: nothing is left claimed. */
  async onModuleDestroy(): Promise<void> {
    await this.semantic?.close();
    await this.sweep.stop();
    await this.listener.stop();
    await this.worker.stop();
    await this.store.close();
    if (this.embedder instanceof OnnxEmbedder) await this.embedder.close();
  }
}
