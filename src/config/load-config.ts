import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { knownModel, knownModelNames } from '../models/known-models';
import { AppConfig, type ApiKeyEntry } from './app-config';
import { parseOAuth, parseRateLimit } from './auth-config';
import {
  boolean,
  cidrs,
  ConfigError,
  cron,
  identifier,
  integer,
  list,
  oneOf,
  optionalDecimal,
  optionalInteger,
  optionalUrl,
  PROFILES,
  type Profile,
  type Reader,
  secretToken,
  text,
} from './config-values';
import { databaseLocation } from './database-location';
import { type Env, readersOf } from './env-reader';
import { type VariableName } from './variables';

/** The model asked of an OpenAI-compatible server when EMBEDDINGS_MODEL does not say. */
export const OPENAI_DEFAULT_MODEL = 'text-embedding-3-small';

/** Where the access policy comes from (it is read and checked by src/access/ at start-up). */
function accessPolicyOf(
  text: string | undefined,
  file: string | undefined,
): AppConfig['accessPolicy'] {
  if (text !== undefined && file !== undefined) {
    throw new ConfigError(
      'ACCESS_POLICY_FILE',
      'set either ACCESS_POLICY or ACCESS_POLICY_FILE, not both',
    );
  }
  if (text !== undefined) return { text };
  return file === undefined ? undefined : { file: resolve(file) };
}

/** Parses and validates the environment. Throws {@link ConfigError} naming the first bad variable. */
export function loadConfig(env: Env = process.env): AppConfig {
  const { given, read } = readersOf(env);

  const host = text(read, 'HOST');
  const port = integer(read, 'PORT', 0, 65535);
  const apiKeys = parseApiKeys(read('API_KEYS'), read('API_KEYS_FILE'));
  const loopback = isLoopbackHost(host);
  const oauth = parseOAuth(
    read,
    loopback ? `http://${host.includes(':') ? `[${host}]` : host}:${port}` : undefined,
  );
  if (apiKeys.length === 0 && oauth === undefined && !loopback) {
    throw new ConfigError(
      'HOST',
      `binding to non-loopback address "${host}" requires API_KEYS (or API_KEYS_FILE) or OAUTH_ISSUER; authentication is off without them`,
    );
  }

  const httpHeadersTimeoutMs = integer(read, 'HTTP_HEADERS_TIMEOUT_MS', 1000, 600_000);
  const httpRequestTimeoutMs = integer(read, 'HTTP_REQUEST_TIMEOUT_MS', 1000, 3_600_000);
  if (httpRequestTimeoutMs <= httpHeadersTimeoutMs) {
    throw new ConfigError(
      'HTTP_REQUEST_TIMEOUT_MS',
      `must be longer than HTTP_HEADERS_TIMEOUT_MS (${httpHeadersTimeoutMs}), got ${httpRequestTimeoutMs}`,
    );
  }

  const qdrantUrl = optionalUrl(read, 'QDRANT_URL');
  const openaiApiKey = read('OPENAI_API_KEY');
  const vectorStore = oneOf(
    read,
    'VECTOR_STORE',
    ['qdrant', 'postgres'],
    qdrantUrl ? 'qdrant' : 'postgres',
  );
  if (vectorStore === 'qdrant' && !qdrantUrl) {
    throw new ConfigError('QDRANT_URL', 'is required when VECTOR_STORE=qdrant');
  }
  const lexicalStore = oneOf(read, 'LEXICAL_STORE', ['local', 'qdrant']);
  if (lexicalStore === 'qdrant' && vectorStore !== 'qdrant') {
    throw new ConfigError(
      'LEXICAL_STORE',
      'qdrant needs the vector store in Qdrant too: set QDRANT_URL (and leave VECTOR_STORE unset or qdrant)',
    );
  }
  const qdrantReplicationFactor = integer(read, 'QDRANT_REPLICATION_FACTOR', 1, 64);
  const qdrantWriteConsistency = integer(read, 'QDRANT_WRITE_CONSISTENCY', 1, 64);
  if (qdrantWriteConsistency > qdrantReplicationFactor) {
    throw new ConfigError(
      'QDRANT_WRITE_CONSISTENCY',
      `must be at most QDRANT_REPLICATION_FACTOR (${qdrantReplicationFactor}), got ${qdrantWriteConsistency}`,
    );
  }
  const vectorSyncEnabled = boolean(read, 'VECTOR_SYNC_ENABLED');
  const clusterRole = oneOf(read, 'AGENT_DATA_CLUSTER_ROLE', ['single', 'vector', 'web']);
  const embeddingsProvider = oneOf(
    read,
    'EMBEDDINGS_PROVIDER',
    ['openai', 'local'],
    openaiApiKey ? 'openai' : 'local',
  );
  const openaiBaseUrl = optionalUrl(read, 'OPENAI_BASE_URL');
  if (embeddingsProvider === 'openai' && !openaiApiKey && !openaiBaseUrl) {
    throw new ConfigError(
      'OPENAI_API_KEY',
      'is required when EMBEDDINGS_PROVIDER=openai (or set OPENAI_BASE_URL for a keyless compatible server)',
    );
  }

  const embeddingsModel = read('EMBEDDINGS_MODEL')?.trim() || undefined;
  if (embeddingsProvider === 'local' && embeddingsModel !== undefined) {
    if (knownModel(embeddingsModel) === undefined) {
      throw new ConfigError(
        'EMBEDDINGS_MODEL',
        `names no model this server runs (known: ${knownModelNames()}; for a model served elsewhere set EMBEDDINGS_PROVIDER=openai and OPENAI_BASE_URL)`,
      );
    }
  }
  const { databaseUrl, dataDir } = databaseLocation(read);

  return new AppConfig({
    host,
    port,
    databaseUrl,
    dataDir,
    migrationsRun: boolean(read, 'MIGRATIONS_RUN'),
    dbPoolSize: integer(read, 'DB_POOL_SIZE', 1, 500),
    apiKeys,
    accessPolicy: accessPolicyOf(read('ACCESS_POLICY'), read('ACCESS_POLICY_FILE')),
    logLevel: oneOf(read, 'LOG_LEVEL', [
      'fatal',
      'error',
      'warn',
      'info',
      'debug',
      'trace',
      'silent',
    ]),
    logFormat: oneOf(read, 'LOG_FORMAT', ['auto', 'json', 'pretty']),
    limits: {
      maxBodyBytes: integer(read, 'MAX_BODY_BYTES', 1, 64 * 1024 * 1024),
      maxMetadataBytes: integer(read, 'MAX_METADATA_BYTES', 2, 16 * 1024 * 1024),
      maxTitleChars: integer(read, 'MAX_TITLE_CHARS', 1, 10_000),
      maxTags: integer(read, 'MAX_TAGS', 0, 1000),
      maxTagChars: integer(read, 'MAX_TAG_CHARS', 1, 1000),
    },
    maxRequestBytes: integer(read, 'MAX_REQUEST_BYTES', 1024, 256 * 1024 * 1024),
    vectorStore,
    qdrantUrl,
    qdrantApiKey: read('QDRANT_API_KEY'),
    qdrantCollection: identifier(read, 'QDRANT_COLLECTION'),
    lexicalStore,
    qdrant: {
      shards: integer(read, 'QDRANT_SHARDS', 1, 1024),
      replicationFactor: qdrantReplicationFactor,
      writeConsistency: qdrantWriteConsistency,
      segments: integer(read, 'QDRANT_SEGMENTS', 1, 256),
      timeoutMs: integer(read, 'QDRANT_TIMEOUT_MS', 100, 600_000),
      searchTimeoutMs: integer(read, 'QDRANT_SEARCH_TIMEOUT_MS', 50, 600_000),
    },
    embeddingsProvider,
    localSemantic: oneOf(read, 'LOCAL_SEMANTIC', ['lsa', 'off']),
    openaiApiKey,
    openaiBaseUrl,
    embeddingsModel:
      embeddingsProvider === 'openai'
        ? (embeddingsModel ?? OPENAI_DEFAULT_MODEL)
        : (knownModel(embeddingsModel ?? '')?.name ?? undefined),
    modelsDir: resolve(read('MODELS_DIR') ?? join(dataDir, 'models')),
    modelsBaseUrl: optionalUrl(read, 'MODELS_BASE_URL')!,
    modelsToken: bearerToken(read, 'MODELS_TOKEN'),
    modelsTimeoutMs: integer(read, 'MODELS_TIMEOUT_MS', 100, 3_600_000),
    modelThreads:
      optionalInteger(read, 'MODEL_THREADS', 1, 64) ??
      Math.min(4, Math.max(1, availableParallelism() - 1)),
    embeddingsDimensions: optionalInteger(read, 'EMBEDDINGS_DIMENSIONS', 1, 16_384),
    vectorSkipPrefixes: list(text(read, 'VECTOR_SKIP_PREFIXES')),
    reindexCron: cron(read, 'REINDEX_CRON'),
    vectorSyncEnabled,
    webConcurrency: integer(read, 'WEB_CONCURRENCY', 1, 64),
    clusterRole,
    localAgentToken: read('AGENT_DATA_LOCAL_TOKEN'),
    vectorWorkHere: vectorSyncEnabled && clusterRole !== 'web',
    vectorWorkerConcurrency: integer(read, 'VECTOR_WORKER_CONCURRENCY', 1, 64),
    vectorMaxAttempts: integer(read, 'VECTOR_MAX_ATTEMPTS', 1, 100),
    vectorRetryBaseMs: integer(read, 'VECTOR_RETRY_BASE_MS', 10, 3_600_000),
    vectorLeaseMs: integer(read, 'VECTOR_LEASE_MS', 1000, 600_000),
    restoreLexicalWaitMs: integer(read, 'RESTORE_LEXICAL_WAIT_MS', 0, 600_000),
    embeddingsBatchSize: integer(read, 'EMBEDDINGS_BATCH_SIZE', 1, 2048),
    embeddingsMaxInputTokens: optionalInteger(read, 'EMBEDDINGS_MAX_INPUT_TOKENS', 64, 1_000_000),
    openaiTimeoutMs: integer(read, 'OPENAI_TIMEOUT_MS', 100, 600_000),
    openaiMaxRetries: integer(read, 'OPENAI_MAX_RETRIES', 0, 10),
    mcpPostSse: boolean(read, 'MCP_POST_SSE'),
    // Each thread has its own heap and tokenizer tables (some 40 MB): at most four unless
    // asked, since a container sees the node's cores, not its CPU limit.
    vectorWorkThreads:
      optionalInteger(read, 'VECTOR_WORK_THREADS', 1, 64) ??
      Math.min(4, Math.max(1, availableParallelism() - 1)),
    mcpSseKeepAliveMs: integer(read, 'MCP_SSE_KEEPALIVE_MS', 10, 600_000),
    mcpListenersPerPrincipal: integer(read, 'MCP_LISTENERS_PER_PRINCIPAL', 1, 10_000),
    mcpListenersMax: integer(read, 'MCP_LISTENERS_MAX', 1, 100_000),
    mcpListenQueue: integer(read, 'MCP_LISTEN_QUEUE', 1, 100_000),
    mcpToolResourceLinks: oneOf(read, 'MCP_TOOL_RESOURCE_LINKS', ['modern', 'always', 'never']),
    allowedOrigins:
      read('ALLOWED_ORIGINS') === undefined ? undefined : list(read('ALLOWED_ORIGINS')!),
    ingestAllowedHosts: list(read('INGEST_ALLOWED_HOSTS') ?? '').map((h) => h.toLowerCase()),
    ingestAllowHttp: boolean(read, 'INGEST_ALLOW_HTTP'),
    environment: env,
    sourcesFile: read('SOURCES_FILE') === undefined ? null : resolve(read('SOURCES_FILE')!),
    sourcesRuns: integer(read, 'SOURCES_RUNS', 1, 16),
    ingestAllowedPrivateCidrs: cidrs(read, 'INGEST_ALLOWED_PRIVATE_CIDRS'),
    ingestTimeoutMs: integer(read, 'INGEST_TIMEOUT_MS', 100, 120_000),
    gptRouteToken: secretToken(read, 'GPT_ROUTE_TOKEN'),
    oauth,
    // On by default where others can reach the server; off on loopback unless asked for.
    rateLimitToolCalls: parseRateLimit(given, 'RATE_LIMIT_TOOL_CALLS', !loopback),
    rateLimitAdminWrites: parseRateLimit(given, 'RATE_LIMIT_ADMIN_WRITES', !loopback),
    searchCandidates: integer(read, 'SEARCH_CANDIDATES', 10, 500),
    searchVectorWeight: optionalDecimal(read, 'SEARCH_VECTOR_WEIGHT', 0, 1),
    shutdownTimeoutMs: integer(read, 'SHUTDOWN_TIMEOUT_MS', 0, 600_000),
    shutdownDrainMs: integer(read, 'SHUTDOWN_DRAIN_MS', 0, 60_000),
    httpHeadersTimeoutMs,
    httpRequestTimeoutMs,
    httpKeepAliveTimeoutMs: integer(read, 'HTTP_KEEPALIVE_TIMEOUT_MS', 100, 600_000),
  });
}

/** A token sent in an HTTP header: printable ASCII without spaces (never echoed). */
function bearerToken(read: Reader, name: VariableName): string | undefined {
  const value = read(name);
  if (value !== undefined && !/^[\x21-\x7e]+$/.test(value)) {
    throw new ConfigError(name, 'must be printable ASCII characters without spaces');
  }
  return value;
}

/** True for `localhost`, 127.0.0.0/8 and ::1 (IPv4-mapped forms included). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h) || h === '0:0:0:0:0:0:0:1';
  return false;
}

function parseApiKeys(inline: string | undefined, file: string | undefined): ApiKeyEntry[] {
  let source = inline;
  let variable = 'API_KEYS';
  if (file !== undefined) {
    if (inline !== undefined)
      throw new ConfigError('API_KEYS_FILE', 'set either API_KEYS or API_KEYS_FILE, not both');
    variable = 'API_KEYS_FILE';
    try {
      source = readFileSync(file, 'utf8')
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter((line) => line !== '' && !line.startsWith('#'))
        .join(';');
    } catch (error) {
      throw new ConfigError('API_KEYS_FILE', `cannot read ${file}: ${(error as Error).message}`);
    }
  }
  if (source === undefined) return [];

  const entries: ApiKeyEntry[] = [];
  const names = new Set<string>();
  const keys = new Set<string>();
  source
    .split(';')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .forEach((entry, index) => {
      const parts = entry.split(':');
      // Never echo the entry itself: it contains a secret.
      const where = `entry ${index + 1}`;
      if (parts.length !== 3) {
        throw new ConfigError(variable, `${where} must be name:key:profile[,profile...]`);
      }
      const [name, key, profileList] = parts.map((p) => p.trim());
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
        throw new ConfigError(
          variable,
          `${where} has an invalid name (letters, digits, _ . - only)`,
        );
      }
      if (key.length < 16) {
        throw new ConfigError(variable, `key "${name}" is shorter than 16 characters`);
      }
      if (names.has(name)) throw new ConfigError(variable, `key name "${name}" appears twice`);
      if (keys.has(key))
        throw new ConfigError(variable, `key "${name}" reuses another entry's key`);
      const profiles = profileList.split(',').map((p) => p.trim());
      for (const profile of profiles) {
        if (!(PROFILES as readonly string[]).includes(profile)) {
          throw new ConfigError(
            variable,
            `key "${name}" names unknown profile "${profile}" (expected one of ${PROFILES.join(', ')})`,
          );
        }
      }
      names.add(name);
      keys.add(key);
      entries.push({ name, key, profiles: new Set(profiles as Profile[]) });
    });
  // Set but empty (";", only comments) would silently turn authentication off.
  if (entries.length === 0) throw new ConfigError(variable, 'is set but lists no key');
  return entries;
}
