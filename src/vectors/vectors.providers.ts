import { FactoryProvider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { EMBEDDER, Embedder } from './embedders/embedder.interface';
import { LOCAL_DEFAULT_DIMENSIONS, LocalEmbedder } from './embedders/local.embedder';
import { OpenAiEmbedder } from './embedders/openai.embedder';
import { EmbeddingsChoice } from '../config/embeddings-choice';
import { OnnxEmbedder } from './embedders/onnx.embedder';
import { chunkTokensFor } from '../models/known-models';

/** Tokens a chunk may hold for OpenAI's own models (their limit) and the hashing embedder. */
const DEFAULT_MAX_INPUT_TOKENS = 8191;
import { PostgresVectorStore } from './stores/postgres.vector-store';
import { QdrantVectorStore } from './stores/qdrant/qdrant.vector-store';
import { VECTOR_STORE, VectorStore } from './stores/vector-store.interface';
import { EmbedderMetrics } from './embedders/embedder.metrics';
import { VectorWorkPool } from './work/vector-work.pool';

/** The embedder chosen at start (embeddings-choice.ts). Throws on a kind it does not know. */
export function createEmbedder(
  config: AppConfig,
  choice: EmbeddingsChoice,
  metrics: EmbedderMetrics,
  pool?: VectorWorkPool,
): Embedder {
  const kind: string = choice.kind;
  switch (kind) {
    case 'model':
      return new OnnxEmbedder(choice.installed!, { passageThreads: config.modelThreads }, metrics);
    case 'hashing':
      return new LocalEmbedder(
        config.embeddingsDimensions ?? LOCAL_DEFAULT_DIMENSIONS,
        config.embeddingsMaxInputTokens ?? DEFAULT_MAX_INPUT_TOKENS,
        metrics,
        pool,
      );
    case 'openai':
      return new OpenAiEmbedder(
        {
          apiKey: config.openaiApiKey,
          baseUrl: config.openaiBaseUrl,
          model: config.embeddingsModel!,
          known: choice.known,
          dimensions: config.embeddingsDimensions,
          // A known model's window, the share the chunker may fill (as for a local model).
          maxInputTokens:
            config.embeddingsMaxInputTokens ??
            (choice.known ? chunkTokensFor(choice.known) : DEFAULT_MAX_INPUT_TOKENS),
          batchSize: config.embeddingsBatchSize,
          timeoutMs: config.openaiTimeoutMs,
          maxRetries: config.openaiMaxRetries,
        },
        metrics,
      );
    default:
      throw new Error(`unknown embedder "${kind}" (expected model, hashing or openai)`);
  }
}

/**
 * The vector store named by VECTOR_STORE. Throws on a name it does not know.
 * `checkQdrantVersion`: the client asks the server's version at once and warns on a mismatch.
 */
export function createVectorStore(
  config: AppConfig,
  dataSource: DataSource,
  { checkQdrantVersion = true, lsa = false } = {},
): VectorStore {
  const store: string = config.vectorStore;
  switch (store) {
    case 'postgres':
      // With the latent-semantic model the vector side searches the store only while the
      // knowledge base is small: a large one never needs its hashed vectors in memory.
      return new PostgresVectorStore(dataSource, { loadOnFirstSearch: lsa });
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
  inject: [AppConfig, EmbeddingsChoice, EmbedderMetrics, VectorWorkPool],
  useFactory: createEmbedder,
};

export const vectorStoreProvider: FactoryProvider<VectorStore> = {
  provide: VECTOR_STORE,
  inject: [AppConfig, DataSource, EmbeddingsChoice],
  useFactory: (config: AppConfig, dataSource: DataSource, choice: EmbeddingsChoice) =>
    // A web worker of a cluster never searches the store itself (the vector worker does).
    createVectorStore(config, dataSource, {
      lsa: choice.lsa(config) || config.clusterRole === 'web',
    }),
};
