import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { loadConfig } from '../config/load-config';
import { MetricsService } from '../metrics/metrics.service';
import { LocalEmbedder } from './embedders/local.embedder';
import { OpenAiEmbedder } from './embedders/openai.embedder';
import { PostgresVectorStore } from './stores/postgres.vector-store';
import { QdrantVectorStore } from './stores/qdrant/qdrant.vector-store';
import { createEmbedder, createVectorStore } from './vectors.providers';
import { EmbedderMetrics } from './embedders/embedder.metrics';
import { EmbeddingsChoice, LSA_MIN_DOCUMENTS } from '../config/embeddings-choice';
import { SEMANTIC_MIN_DOCUMENTS } from './lexical/lexical.store';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const metrics = new EmbedderMetrics(new MetricsService());
const dataSource = {} as DataSource;
/** No model is installed here: the local embedder is the hashing one. */
const MODELS_DIR = join(mkdtempSync(join(tmpdir(), 'agent-data-models-')), 'models');

async function embedderOf(config: AppConfig) {
  return createEmbedder(config, await EmbeddingsChoice.choose(config), metrics);
}

describe('vector factories', () => {
  it('default to the local embedder and the PostgreSQL store (no keys, no URLs)', async () => {
    const config = loadConfig({ MODELS_DIR });
    const embedder = await embedderOf(config);
    expect(embedder).toBeInstanceOf(LocalEmbedder);
    expect(embedder.dimensions).toBe(768);
    expect(createVectorStore(config, dataSource)).toBeInstanceOf(PostgresVectorStore);
  });

  it('say, without a model, that the latent-semantic model waits for enough documents', async () => {
    // The start-up log's line: the choice is made before a document is counted.
    const choice = await EmbeddingsChoice.choose(loadConfig({ MODELS_DIR }));
    expect(LSA_MIN_DOCUMENTS).toBe(SEMANTIC_MIN_DOCUMENTS);
    expect(choice.reason).toMatch(
      /^the latent-semantic model, learnt from the documents once the knowledge base holds 50 \(hashed vectors until then\): no embedding model is installed in /,
    );
    const off = await EmbeddingsChoice.choose(loadConfig({ MODELS_DIR, LOCAL_SEMANTIC: 'off' }));
    expect(off.reason).toMatch(/^hashed vectors \(LOCAL_SEMANTIC=off\): /);
  });

  it('start each query from the weights of its embedder, or use SEARCH_VECTOR_WEIGHT as it is', async () => {
    const own = await EmbeddingsChoice.choose(loadConfig({ MODELS_DIR }));
    expect(own.vectorWeights).toEqual({ keywords: 0.1, sentences: 0.3, codeSentences: 0.1 });
    const given = await EmbeddingsChoice.choose(
      loadConfig({ MODELS_DIR, SEARCH_VECTOR_WEIGHT: '0.4' }),
    );
    // Set by the operator: the same for every query, not moved by each query's evidence.
    expect(given.vectorWeights).toEqual({
      keywords: 0.4,
      sentences: 0.4,
      codeSentences: 0.4,
      fixed: true,
    });
  });

  it('choose OpenAI and Qdrant from configuration', async () => {
    const config = loadConfig({
      OPENAI_API_KEY: 'sk-x',
      QDRANT_URL: 'http://127.0.0.1:6333',
    });
    const embedder = await embedderOf(config);
    expect(embedder).toBeInstanceOf(OpenAiEmbedder);
    expect(embedder).toMatchObject({ model: 'text-embedding-3-small', dimensions: 1536 });
    expect(createVectorStore(config, dataSource, { checkQdrantVersion: false })).toBeInstanceOf(
      QdrantVectorStore,
    );
  });

  it('use EMBEDDINGS_DIMENSIONS, and require it for a model of unknown size', async () => {
    const sized = loadConfig({
      EMBEDDINGS_PROVIDER: 'local',
      EMBEDDINGS_DIMENSIONS: '256',
      MODELS_DIR,
    });
    expect((await embedderOf(sized)).dimensions).toBe(256);
    const unknown = loadConfig({
      OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
      EMBEDDINGS_PROVIDER: 'openai',
      EMBEDDINGS_MODEL: 'nomic-embed-text',
    });
    await expect(embedderOf(unknown)).rejects.toThrow(
      'EMBEDDINGS_DIMENSIONS is required for the model "nomic-embed-text"',
    );
  });

  it('know the length of a known model served by an OpenAI-compatible server', async () => {
    const config = loadConfig({
      OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1',
      EMBEDDINGS_PROVIDER: 'openai',
      EMBEDDINGS_MODEL: 'intfloat/e5-small-v2',
    });
    expect((await embedderOf(config)).dimensions).toBe(384);
  });

  it('throw on a name they do not know', async () => {
    const config = loadConfig({ MODELS_DIR });
    const bad = new AppConfig({ ...config, vectorStore: 'faiss' as never });
    const choice = Object.assign(Object.create(EmbeddingsChoice.prototype) as EmbeddingsChoice, {
      kind: 'cohere',
    });
    expect(() => createEmbedder(config, choice, metrics)).toThrow('unknown embedder "cohere"');
    expect(() => createVectorStore(bad, dataSource)).toThrow('unknown vector store "faiss"');
  });
});
