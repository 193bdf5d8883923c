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
import { QdrantSemanticRepository } from './stores/qdrant/qdrant-semantic.repository';
import { VECTOR_STORE, VectorStore } from './stores/vector-store.interface';
import { EmbedderMetrics } from './embedders/embedder.metrics';
import { VectorWorkPool } from './work/vector-work.pool';
import { DocumentsService } from '../documents/documents.service';
import { LexicalStore } from './lexical/lexical.store';
import { LEXICAL_MIRROR, LexicalMirror } from './lexical/lexical-side';
import { QdrantLexicalIndex } from './stores/qdrant/qdrant-lexical.index';
import { QdrantSemantic } from './stores/qdrant/qdrant-semantic';
import { VectorStoreInitializer } from './stores/vector-store.initializer';
import { SearchMetrics } from './search/search.metrics';
import { SEARCH_SIDES, SearchSides } from './search/search-sides';
import { LocalSearchSides } from './search/search-sides.local';
import { QdrantSearchSides } from './search/qdrant-search-sides';

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
 * `lsa`: this process searches the store only while the knowledge base is small. `passageGraph`:
 * a Qdrant collection made now gets a search graph over the passages (not when the vector side
 * ranks by the latent-semantic model, whoever searches).
 */
export function createVectorStore(
  config: AppConfig,
  dataSource: DataSource,
  { checkQdrantVersion = true, lsa = false, passageGraph = true } = {},
): VectorStore {
  const store: string = config.vectorStore;
  switch (store) {
    case 'postgres':
      // With the latent-semantic model the vector side searches the store only while the
      // knowledge base is small: a large one never needs its hashed vectors in memory.
      return new PostgresVectorStore(dataSource, { loadOnFirstSearch: lsa });
    case 'qdrant':
      return QdrantVectorStore.open({
        url: config.qdrantUrl!,
        apiKey: config.qdrantApiKey,
        collection: config.qdrantCollection,
        checkCompatibility: checkQdrantVersion,
        timeoutMs: config.qdrant.timeoutMs,
        searchTimeoutMs: config.qdrant.searchTimeoutMs,
        layout: config.lexicalStore === 'qdrant' ? 'shared' : 'vectors',
        settings: { ...config.qdrant, passageGraph },
        forgetSemanticModels: () =>
          new QdrantSemanticRepository(dataSource, config.qdrantCollection).forgetModels(),
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
      passageGraph: !choice.lsa(config),
    }),
};

/**
 * The lexical index in Qdrant when LEXICAL_STORE=qdrant (in the vector store's collection),
 * with the latent-semantic model's vectors beside it when that is the vector side, else
 * `null`: then each server holds the lexical index itself (lexical/).
 */
export const qdrantLexicalIndexProvider: FactoryProvider<QdrantLexicalIndex | null> = {
  provide: QdrantLexicalIndex,
  inject: [AppConfig, VECTOR_STORE],
  useFactory: (config: AppConfig, store: VectorStore) => {
    if (config.lexicalStore !== 'qdrant') return null;
    const qdrant = store as QdrantVectorStore;
    return new QdrantLexicalIndex(qdrant.collection, qdrant.searchClient);
  },
};

/** The latent-semantic model in Qdrant, when the lexical side and the model's vectors live there. */
export const qdrantSemanticProvider: FactoryProvider<QdrantSemantic | null> = {
  provide: QdrantSemantic,
  inject: [
    AppConfig,
    EmbeddingsChoice,
    DataSource,
    QdrantLexicalIndex,
    LexicalStore,
    VectorWorkPool,
    VECTOR_STORE,
  ],
  useFactory: (
    config: AppConfig,
    choice: EmbeddingsChoice,
    dataSource: DataSource,
    index: QdrantLexicalIndex | null,
    lexical: LexicalStore,
    pool: VectorWorkPool,
    store: VectorStore,
  ) => {
    if (index === null || !choice.lsa(config)) return null;
    // Only a process that runs the pipeline learns models; every one searches with them.
    const learns = config.vectorSyncEnabled && config.clusterRole !== 'web';
    const semantic = new QdrantSemantic(
      dataSource,
      index.collection.name,
      lexical,
      index,
      learns ? pool : undefined,
    );
    index.useSemantic(semantic);
    // The passages are the vector side only until a model is searched.
    (store as QdrantVectorStore).writePassagesWhile(async () => !(await semantic.modelSearched()));
    return semantic;
  },
};

export const lexicalMirrorProvider: FactoryProvider<LexicalMirror | null> = {
  provide: LEXICAL_MIRROR,
  inject: [QdrantLexicalIndex],
  useFactory: (index: QdrantLexicalIndex | null) => index,
};

/** Where a search's two sides come from: this process's index, or Qdrant. */
export const searchSidesProvider: FactoryProvider<SearchSides> = {
  provide: SEARCH_SIDES,
  inject: [
    QdrantLexicalIndex,
    QdrantSemantic,
    LexicalStore,
    EMBEDDER,
    VECTOR_STORE,
    VectorStoreInitializer,
    DocumentsService,
    SearchMetrics,
  ],
  useFactory: (
    index: QdrantLexicalIndex | null,
    semantic: QdrantSemantic | null,
    lexical: LexicalStore,
    embedder: Embedder,
    store: VectorStore,
    stores: VectorStoreInitializer,
    documents: DocumentsService,
    metrics: SearchMetrics,
  ) =>
    index
      ? new QdrantSearchSides(index, lexical, embedder, stores, metrics, semantic ?? undefined)
      : new LocalSearchSides(lexical, embedder, store, stores, documents, metrics),
};
