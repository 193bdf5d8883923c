import { FactoryProvider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { EMBEDDER, Embedder } from './embedders/embedder.interface';
import { LOCAL_DEFAULT_DIMENSIONS, LocalEmbedder } from './embedders/local.embedder';
import { OpenAiEmbedder } from './embedders/openai.embedder';
import { PostgresVectorStore } from './stores/postgres.vector-store';
import { QdrantVectorStore } from './stores/qdrant.vector-store';
import { VECTOR_STORE, VectorStore } from './stores/vector-store.interface';
import { EmbedderMetrics } from './embedders/embedder.metrics';
import { VectorWorkPool } from './work/vector-work.pool';

/** The embedder named by EMBEDDINGS_PROVIDER. Throws on a name it does not know. */
export function createEmbedder(
  config: AppConfig,
  metrics: EmbedderMetrics,
  pool?: VectorWorkPool,
): Embedder {
  const provider: string = config.embeddingsProvider;
  switch (provider) {
    case 'local':
      return new LocalEmbedder(
        config.embeddingsDimensions ?? LOCAL_DEFAULT_DIMENSIONS,
        config.embeddingsMaxInputTokens,
        metrics,
        pool,
      );
    case 'openai':
      return new OpenAiEmbedder(
        {
          apiKey: config.openaiApiKey,
          baseUrl: config.openaiBaseUrl,
          model: config.embeddingsModel,
          dimensions: config.embeddingsDimensions,
          maxInputTokens: config.embeddingsMaxInputTokens,
          batchSize: config.embeddingsBatchSize,
          timeoutMs: config.openaiTimeoutMs,
          maxRetries: config.openaiMaxRetries,
        },
        metrics,
      );
    default:
      throw new Error(`unknown embeddings provider "${provider}" (expected local or openai)`);
  }
}

/**
 * The vector store named by VECTOR_STORE. Throws on a name it does not know.
 * `checkQdrantVersion`: the client asks the server's version at once and warns on a mismatch.
 */
export function createVectorStore(
  config: AppConfig,
  dataSource: DataSource,
  { checkQdrantVersion = true } = {},
): VectorStore {
  const store: string = config.vectorStore;
  switch (store) {
    case 'postgres':
      return new PostgresVectorStore(dataSource, {
        loadOnFirstSearch: config.embeddingsProvider === 'local' && config.localSemantic === 'lsa',
      });
    case 'qdrant':
      return new QdrantVectorStore({
        url: config.qdrantUrl!,
        apiKey: config.qdrantApiKey,
        collection: config.qdrantCollection,
        checkCompatibility: checkQdrantVersion,
      });
    default:
      throw new Error(`unknown vector store "${store}" (expected postgres or qdrant)`);
  }
}

export const embedderProvider: FactoryProvider<Embedder> = {
  provide: EMBEDDER,
  inject: [AppConfig, EmbedderMetrics, VectorWorkPool],
  useFactory: createEmbedder,
};

export const vectorStoreProvider: FactoryProvider<VectorStore> = {
  provide: VECTOR_STORE,
  inject: [AppConfig, DataSource],
  useFactory: (config: AppConfig, dataSource: DataSource) => createVectorStore(config, dataSource),
};
