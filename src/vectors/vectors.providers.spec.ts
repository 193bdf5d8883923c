import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { loadConfig } from '../config/load-config';
import { MetricsService } from '../metrics/metrics.service';
import { LocalEmbedder } from './embedders/local.embedder';
import { OpenAiEmbedder } from './embedders/openai.embedder';
import { PostgresVectorStore } from './stores/postgres.vector-store';
import { QdrantVectorStore } from './stores/qdrant.vector-store';
import { createEmbedder, createVectorStore } from './vectors.providers';
import { EmbedderMetrics } from './embedders/embedder.metrics';

const metrics = new EmbedderMetrics(new MetricsService());
const dataSource = {} as DataSource;

describe('vector factories', () => {
  it('default to the local embedder and the PostgreSQL store (no keys, no URLs)', () => {
    const config = loadConfig({});
    const embedder = createEmbedder(config, metrics);
    expect(embedder).toBeInstanceOf(LocalEmbedder);
    expect(embedder.dimensions).toBe(768);
    expect(createVectorStore(config, dataSource)).toBeInstanceOf(PostgresVectorStore);
  });

  it('choose OpenAI and Qdrant from configuration', () => {
    const config = loadConfig({
      OPENAI_API_KEY: 'sk-x',
      QDRANT_URL: 'http://127.0.0.1:6333',
    });
    const embedder = createEmbedder(config, metrics);
    expect(embedder).toBeInstanceOf(OpenAiEmbedder);
    expect(embedder).toMatchObject({ model: 'text-embedding-3-small', dimensions: 1536 });
    expect(createVectorStore(config, dataSource, { checkQdrantVersion: false })).toBeInstanceOf(
      QdrantVectorStore,
    );
  });

  it('use EMBEDDINGS_DIMENSIONS, and require it for a model of unknown size', () => {
    const sized = loadConfig({ EMBEDDINGS_PROVIDER: 'local', EMBEDDINGS_DIMENSIONS: '256' });
    expect(createEmbedder(sized, metrics).dimensions).toBe(256);
    const unknown = loadConfig({
      OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
      EMBEDDINGS_PROVIDER: 'openai',
      EMBEDDINGS_MODEL: 'nomic-embed-text',
    });
    expect(() => createEmbedder(unknown, metrics)).toThrow(
      'EMBEDDINGS_DIMENSIONS is required for the model "nomic-embed-text"',
    );
  });

  it('throw on a name they do not know', () => {
    const config = loadConfig({});
    const bad = new AppConfig({
      ...config,
      embeddingsProvider: 'cohere' as never,
      vectorStore: 'faiss' as never,
    });
    expect(() => createEmbedder(bad, metrics)).toThrow('unknown embeddings provider "cohere"');
    expect(() => createVectorStore(bad, dataSource)).toThrow('unknown vector store "faiss"');
  });
});
