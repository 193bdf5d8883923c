import { Inject, Logger, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AppConfig } from '../config/app-config';
import { DocumentsModule } from '../documents/documents.module';
import { SearchService } from './search.service';
import { warmTokenizer } from './tokenizer';
import { VectorBatchProcessor } from './vector-batch.processor';
import { VectorQueueMetrics } from './vector-queue.metrics';
import { VectorQueueRepository } from './vector-queue.repository';
import { VectorRecoverySweep } from './vector-recovery.sweep';
import { VECTOR_STORE, VectorStore } from './vector-store.interface';
import { VectorStoreInitializer } from './vector-store.initializer';
import { VectorSyncListener } from './vector-sync.listener';
import { VectorSyncWorker } from './vector-sync.worker';
import { VectorsAdminService } from './vectors-admin.service';
import { SearchController, VectorsAdminController } from './vectors.controller';
import { VectorsHealth } from './vectors.health';
import { VectorsMetrics } from './vectors.metrics';
import { embedderProvider, vectorStoreProvider } from './vectors.providers';
import { VectorWorkPool } from './work/vector-work.pool';
import { PassagesRepository } from './passages.repository';

/**
 * The vector pipeline (SPEC §8): the queue over the `vector_*` columns (its repository and
 * gauges), LISTEN/NOTIFY listener, sync worker, the worker threads that chunk and embed
 * locally, embedders (`EMBEDDER`), stores (`VECTOR_STORE`), search, recovery sweep and
 * admin endpoints.
 * With VECTOR_SYNC_ENABLED=false the listener, worker and sweep do not run; search still
 * answers from what is indexed.
 */
@Module({
  imports: [ScheduleModule.forRoot(), DocumentsModule],
  controllers: [SearchController, VectorsAdminController],
  providers: [
    VectorsMetrics,
    VectorQueueRepository,
    PassagesRepository,
    VectorQueueMetrics,
    VectorWorkPool,
    embedderProvider,
    vectorStoreProvider,
    VectorStoreInitializer,
    VectorBatchProcessor,
    VectorSyncWorker,
    VectorSyncListener,
    VectorRecoverySweep,
    SearchService,
    VectorsAdminService,
    VectorsHealth,
  ],
  exports: [SearchService],
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
  ) {}

  async onApplicationBootstrap(): Promise<void> {
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
    if (!this.config.vectorWorkHere) {
      this.logger.log('vector work runs in another worker of this cluster');
      return;
    }
    this.worker.start();
    await this.listener.start();
    this.sweep.start();
  }

  /** Runs before the database pool closes: nothing is left claimed. */
  async onModuleDestroy(): Promise<void> {
    await this.sweep.stop();
    await this.listener.stop();
    await this.worker.stop();
    await this.store.close();
  }
}
