import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from './config-values';
import { isLoopbackHost, loadConfig } from './load-config';

const KEY_A = 'a-very-secret-key-0001';
const KEY_B = 'another-secret-key-0002';

function refusal(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has the documented defaults on an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      databaseUrl: undefined,
      dataDir: resolve('./.data'),
      migrationsRun: true,
      apiKeys: [],
      authEnabled: false,
      logLevel: 'info',
      logFormat: 'auto',
      limits: {
        maxBodyBytes: 1024 * 1024,
        maxMetadataBytes: 64 * 1024,
        maxTitleChars: 300,
        maxTags: 50,
      },
      vectorStore: 'postgres',
      embeddingsProvider: 'local',
      qdrantCollection: 'kb_documents',
      embeddingsModel: undefined,
      modelsDir: resolve('./.data/models'),
      modelsBaseUrl: 'https://huggingface.co',
      modelsToken: undefined,
      modelsTimeoutMs: 30_000,
      embeddingsDimensions: undefined,
      vectorSkipPrefixes: ['operations/tasks/comments/', 'registries/'],
      reindexCron: '*/5 * * * *',
      mcpPostSse: true,
      allowedOrigins: undefined,
      ingestAllowedHosts: [],
    });
  });

  it('treats blank values as unset and trims the others', () => {
    const config = loadConfig({ PORT: '  ', HOST: ' 127.0.0.2 ', LOG_LEVEL: '' });
    expect(config.port).toBe(8080);
    expect(config.host).toBe('127.0.0.2');
    expect(config.logLevel).toBe('info');
  });

  it('reads typed values', () => {
    const config = loadConfig({
      PORT: '9000',
      DATABASE_URL: 'postgresql://u:p@db:5432/kb',
      MIGRATIONS_RUN: 'false',
      MCP_POST_SSE: 'off',
      MAX_BODY_BYTES: '2048',
      QDRANT_URL: 'https://qdrant.example.com:6333/',
      OPENAI_API_KEY: 'sk-test',
      EMBEDDINGS_DIMENSIONS: '256',
      ALLOWED_ORIGINS: 'https://a.example.com, https://b.example.com',
      INGEST_ALLOWED_HOSTS: 'Docs.Example.com,*.example.org',
    });
    expect(config).toMatchObject({
      port: 9000,
      databaseUrl: 'postgresql://u:p@db:5432/kb',
      migrationsRun: false,
      mcpPostSse: false,
      limits: { maxBodyBytes: 2048 },
      vectorStore: 'qdrant',
      qdrantUrl: 'https://qdrant.example.com:6333',
      embeddingsProvider: 'openai',
      embeddingsDimensions: 256,
      allowedOrigins: ['https://a.example.com', 'https://b.example.com'],
      ingestAllowedHosts: ['docs.example.com', '*.example.org'],
    });
  });

  it('has fault-handling defaults sized for a shared machine, and reads them', () => {
    expect(loadConfig({})).toMatchObject({
      vectorLeaseMs: 15_000,
      shutdownDrainMs: 1000,
      httpHeadersTimeoutMs: 10_000,
      httpRequestTimeoutMs: 60_000,
      httpKeepAliveTimeoutMs: 5000,
    });
    expect(loadConfig({}).vectorWorkThreads).toBeGreaterThanOrEqual(1);
    expect(loadConfig({}).vectorWorkThreads).toBeLessThanOrEqual(4);
    expect(
      loadConfig({
        VECTOR_LEASE_MS: '2000',
        VECTOR_WORK_THREADS: '3',
        SHUTDOWN_DRAIN_MS: '0',
        HTTP_HEADERS_TIMEOUT_MS: '2000',
        HTTP_REQUEST_TIMEOUT_MS: '3000',
        HTTP_KEEPALIVE_TIMEOUT_MS: '65000',
      }),
    ).toMatchObject({
      vectorLeaseMs: 2000,
      vectorWorkThreads: 3,
      shutdownDrainMs: 0,
      httpHeadersTimeoutMs: 2000,
      httpRequestTimeoutMs: 3000,
      httpKeepAliveTimeoutMs: 65_000,
    });
  });

  it('reads the ingest escape hatch as normalised CIDRs, closed by default', () => {
    expect(loadConfig({})).toMatchObject({
      ingestAllowedPrivateCidrs: [],
      ingestTimeoutMs: 15_000,
    });
    const config = loadConfig({
      INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.1, 10.0.0.0/8,FD00::/8',
      INGEST_TIMEOUT_MS: '500',
    });
    expect(config.ingestAllowedPrivateCidrs).toEqual(['127.0.0.1/32', '10.0.0.0/8', 'fd00::/8']);
    expect(config.ingestTimeoutMs).toBe(500);
  });

  it('runs one process unless WEB_CONCURRENCY asks for a cluster; web workers leave the vector work to another', () => {
    expect(loadConfig({})).toMatchObject({
      webConcurrency: 1,
      clusterRole: 'single',
      vectorWorkHere: true,
    });
    expect(loadConfig({ WEB_CONCURRENCY: '4' }).webConcurrency).toBe(4);
    expect(loadConfig({ AGENT_DATA_CLUSTER_ROLE: 'vector' }).vectorWorkHere).toBe(true);
    expect(loadConfig({ AGENT_DATA_CLUSTER_ROLE: 'web' }).vectorWorkHere).toBe(false);
    expect(loadConfig({ VECTOR_SYNC_ENABLED: 'false' }).vectorWorkHere).toBe(false);
  });

  it('names a local model by its name or a Hugging Face id, and refuses one it does not know', () => {
    expect(loadConfig({ EMBEDDINGS_MODEL: 'BAAI/bge-small-en-v1.5' }).embeddingsModel).toBe(
      'bge-small-en-v1.5',
    );
    expect(() => loadConfig({ EMBEDDINGS_MODEL: 'gte-large' })).toThrow(
      /EMBEDDINGS_MODEL: names no model this server runs \(known: bge-small-en-v1.5, /,
    );
    // An OpenAI-compatible server's models are its own business.
    const openai = { EMBEDDINGS_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-test' };
    expect(loadConfig(openai).embeddingsModel).toBe('text-embedding-3-small');
    expect(loadConfig({ ...openai, EMBEDDINGS_MODEL: 'gte-large' }).embeddingsModel).toBe(
      'gte-large',
    );
    expect(loadConfig({ DATA_DIR: '/srv/kb' }).modelsDir).toBe('/srv/kb/models');
    expect(loadConfig({ MODELS_DIR: '/opt/models' }).modelsDir).toBe('/opt/models');
  });

  it('reads the token and the timeout of `agent-data models pull`, never echoing the token', () => {
    expect(loadConfig({ MODELS_TOKEN: 'hf_abcDEF123' }).modelsToken).toBe('hf_abcDEF123');
    expect(loadConfig({ MODELS_TIMEOUT_MS: '500' }).modelsTimeoutMs).toBe(500);
    expect(refusal({ MODELS_TIMEOUT_MS: '10' }).message).toBe(
      'MODELS_TIMEOUT_MS: must be between 100 and 3600000, got 10',
    );
    const error = refusal({ MODELS_TOKEN: 'hf_abc\r\nX-Evil: 1' });
    expect(error.message).toBe('MODELS_TOKEN: must be printable ASCII characters without spaces');
  });

  it("leaves the vector side's share to the embedder, unless told", () => {
    expect(loadConfig({}).searchVectorWeight).toBeUndefined();
    expect(() => loadConfig({ SEARCH_VECTOR_WEIGHT: '1.5' })).toThrow(/SEARCH_VECTOR_WEIGHT/);
    expect(loadConfig({ SEARCH_VECTOR_WEIGHT: '0.75' }).searchVectorWeight).toBe(0.75);
    expect(loadConfig({ SEARCH_VECTOR_WEIGHT: '0' }).searchVectorWeight).toBe(0);
  });

  // One bad value per variable: the error names that variable (first, as "NAME: problem").
  it.each([
    ['PORT', { PORT: 'http' }],
    ['PORT', { PORT: '65536' }],
    ['PORT', { PORT: '-1' }],
    ['PORT', { PORT: '80.5' }],
    ['DB_POOL_SIZE', { DB_POOL_SIZE: '0' }],
    ['MIGRATIONS_RUN', { MIGRATIONS_RUN: 'maybe' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'verbose' }],
    ['MAX_BODY_BYTES', { MAX_BODY_BYTES: '1MB' }],
    ['MAX_METADATA_BYTES', { MAX_METADATA_BYTES: '1' }],
    ['MAX_TITLE_CHARS', { MAX_TITLE_CHARS: '0' }],
    ['MAX_TAGS', { MAX_TAGS: '-5' }],
    ['MAX_TAG_CHARS', { MAX_TAG_CHARS: 'ten' }],
    ['MAX_REQUEST_BYTES', { MAX_REQUEST_BYTES: '10' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://db/kb' }],
    ['VECTOR_STORE', { VECTOR_STORE: 'pinecone' }],
    ['QDRANT_URL', { VECTOR_STORE: 'qdrant' }],
    ['QDRANT_URL', { QDRANT_URL: 'not a url' }],
    ['QDRANT_URL', { QDRANT_URL: 'ftp://qdrant:6333' }],
    ['QDRANT_COLLECTION', { QDRANT_COLLECTION: 'bad name!' }],
    ['EMBEDDINGS_PROVIDER', { EMBEDDINGS_PROVIDER: 'cohere' }],
    ['OPENAI_API_KEY', { EMBEDDINGS_PROVIDER: 'openai' }],
    ['OPENAI_BASE_URL', { OPENAI_BASE_URL: 'localhost:11434' }],
    ['EMBEDDINGS_DIMENSIONS', { EMBEDDINGS_DIMENSIONS: '0' }],
    ['REINDEX_CRON', { REINDEX_CRON: 'every five minutes' }],
    ['VECTOR_SYNC_ENABLED', { VECTOR_SYNC_ENABLED: 'enabled' }],
    ['MCP_POST_SSE', { MCP_POST_SSE: '2' }],
    ['MCP_SSE_KEEPALIVE_MS', { MCP_SSE_KEEPALIVE_MS: '5' }],
    ['MCP_TOOL_RESOURCE_LINKS', { MCP_TOOL_RESOURCE_LINKS: 'sometimes' }],
    ['INGEST_ALLOW_HTTP', { INGEST_ALLOW_HTTP: 'sometimes' }],
    ['INGEST_ALLOWED_PRIVATE_CIDRS', { INGEST_ALLOWED_PRIVATE_CIDRS: 'localhost' }],
    ['INGEST_ALLOWED_PRIVATE_CIDRS', { INGEST_ALLOWED_PRIVATE_CIDRS: '10.0.0.0/33' }],
    ['INGEST_ALLOWED_PRIVATE_CIDRS', { INGEST_ALLOWED_PRIVATE_CIDRS: '::1/129' }],
    ['INGEST_ALLOWED_PRIVATE_CIDRS', { INGEST_ALLOWED_PRIVATE_CIDRS: '10.0.0.0/8/1' }],
    ['INGEST_TIMEOUT_MS', { INGEST_TIMEOUT_MS: '15s' }],
    ['GPT_ROUTE_TOKEN', { GPT_ROUTE_TOKEN: 'short' }],
    ['SHUTDOWN_TIMEOUT_MS', { SHUTDOWN_TIMEOUT_MS: '1e4' }],
    ['SHUTDOWN_DRAIN_MS', { SHUTDOWN_DRAIN_MS: '90000' }],
    ['VECTOR_LEASE_MS', { VECTOR_LEASE_MS: '500' }],
    ['VECTOR_WORK_THREADS', { VECTOR_WORK_THREADS: '0' }],
    ['HTTP_HEADERS_TIMEOUT_MS', { HTTP_HEADERS_TIMEOUT_MS: '10s' }],
    ['HTTP_KEEPALIVE_TIMEOUT_MS', { HTTP_KEEPALIVE_TIMEOUT_MS: '0' }],
    // A whole request cannot have less time than its head.
    ['HTTP_REQUEST_TIMEOUT_MS', { HTTP_REQUEST_TIMEOUT_MS: '5000' }],
    [
      'HTTP_REQUEST_TIMEOUT_MS',
      { HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '20000' },
    ],
    ['HOST', { HOST: '0.0.0.0' }],
    ['API_KEYS', { API_KEYS: 'nocolons' }],
    ['WEB_CONCURRENCY', { WEB_CONCURRENCY: '0' }],
    ['WEB_CONCURRENCY', { WEB_CONCURRENCY: 'auto' }],
    ['AGENT_DATA_CLUSTER_ROLE', { AGENT_DATA_CLUSTER_ROLE: 'primary' }],
    ['SEARCH_VECTOR_WEIGHT', { SEARCH_VECTOR_WEIGHT: 'heavy' }],
    ['SEARCH_VECTOR_WEIGHT', { SEARCH_VECTOR_WEIGHT: '-1' }],
    ['SEARCH_VECTOR_WEIGHT', { SEARCH_VECTOR_WEIGHT: '11' }],
  ])('stops on a bad %s with an error naming it', (variable, env) => {
    const error = refusal(env);
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}: `)).toBe(true);
    expect(error.message).not.toContain('\n');
  });

  describe('binding address', () => {
    it.each(['0.0.0.0', '::', '10.0.0.5', '192.168.1.10', 'example.com', 'my-host'])(
      'refuses non-loopback %s without API_KEYS',
      (host) => {
        const error = refusal({ HOST: host });
        expect(error.variable).toBe('HOST');
        expect(error.message).toMatch(/requires API_KEYS/);
      },
    );

    it('allows a non-loopback address once API_KEYS is set', () => {
      const config = loadConfig({ HOST: '0.0.0.0', API_KEYS: `ops:${KEY_A}:admin` });
      expect(config.host).toBe('0.0.0.0');
      expect(config.authEnabled).toBe(true);
    });

    it.each([
      '127.0.0.1',
      '127.1.2.3',
      'localhost',
      'api.localhost',
      '::1',
      '[::1]',
      '::ffff:127.0.0.1',
    ])('treats %s as loopback', (host) => {
      expect(isLoopbackHost(host)).toBe(true);
      expect(loadConfig({ HOST: host }).authEnabled).toBe(false);
    });

    it.each(['0.0.0.0', '::', '128.0.0.1', '::2', 'localhost.example.com'])(
      'does not treat %s as loopback',
      (host) => {
        expect(isLoopbackHost(host)).toBe(false);
      },
    );
  });

  describe('API_KEYS', () => {
    it('parses name:key:profile[,profile] entries separated by ;', () => {
      const config = loadConfig({
        API_KEYS: ` ops : ${KEY_A} : admin, internal ;; reader:${KEY_B}:readonly; `,
      });
      expect(config.apiKeys.map((entry) => [entry.name, entry.key, [...entry.profiles]])).toEqual([
        ['ops', KEY_A, ['admin', 'internal']],
        ['reader', KEY_B, ['readonly']],
      ]);
      expect(config.authEnabled).toBe(true);
    });

    it('reads API_KEYS_FILE, one entry per line, skipping blanks and comments', () => {
      const dir = mkdtempSync(join(tmpdir(), 'agent-data-keys-'));
      try {
        const file = join(dir, 'keys');
        writeFileSync(file, `# keys\nops:${KEY_A}:admin\n\r\nreader:${KEY_B}:readonly,gpt\n`);
        const config = loadConfig({ API_KEYS_FILE: file });
        expect(config.apiKeys.map((entry) => entry.name)).toEqual(['ops', 'reader']);
        expect([...config.apiKeys[1].profiles]).toEqual(['readonly', 'gpt']);

        writeFileSync(file, '# nothing but comments\n');
        expect(refusal({ API_KEYS_FILE: file }).message).toBe(
          'API_KEYS_FILE: is set but lists no key',
        );
        expect(refusal({ API_KEYS_FILE: join(dir, 'missing') }).variable).toBe('API_KEYS_FILE');
        expect(refusal({ API_KEYS_FILE: file, API_KEYS: `ops:${KEY_A}:admin` }).variable).toBe(
          'API_KEYS_FILE',
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    // Every refusal names the variable and an entry or key name, never the key itself.
    it.each([
      [`ops:${KEY_A}`, /entry 1 must be name:key:profile/],
      [`ops:${KEY_A}:admin:extra`, /entry 1 must be name:key:profile/],
      [`ok:${KEY_B}:admin;bad name:${KEY_A}:admin`, /entry 2 has an invalid name/],
      [`ops:${KEY_A.slice(0, 15)}:admin`, /key "ops" is shorter than 16 characters/],
      [`ops:${KEY_A}:admin;ops:${KEY_B}:readonly`, /key name "ops" appears twice/],
      [`ops:${KEY_A}:admin;other:${KEY_A}:readonly`, /key "other" reuses another entry's key/],
      [`ops:${KEY_A}:root`, /key "ops" names unknown profile "root"/],
      [`ops:${KEY_A}:`, /key "ops" names unknown profile ""/],
      [';', /is set but lists no key/],
    ])('refuses %j without echoing a key', (value, problem) => {
      const error = refusal({ API_KEYS: value });
      expect(error.variable).toBe('API_KEYS');
      expect(error.message).toMatch(problem);
      expect(error.message).not.toContain(KEY_A);
      expect(error.message).not.toContain(KEY_A.slice(0, 15));
      expect(error.message).not.toContain(KEY_B);
    });
  });
});
