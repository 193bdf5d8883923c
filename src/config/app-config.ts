import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { validateCronExpression } from 'cron';

import { type OAuthSettings, parseOAuth, parseRateLimit, type RateLimit } from './auth-config';
import {
  ConfigError,
  httpUrl,
  decimal,
  integer,
  list,
  optionalInteger,
  PROFILES,
  type Profile,
  type Reader,
} from './config-values';

export { ConfigError, PROFILES, type Profile } from './config-values';
export type { OAuthSettings, RateLimit } from './auth-config';

export interface ApiKeyEntry {
  /** Name used in logs and audit rows; never the key itself. */
  readonly name: string;
  readonly key: string;
  readonly profiles: ReadonlySet<Profile>;
}

export interface DocumentLimits {
  /** UTF-8 bytes of a document body. */
  readonly maxBodyBytes: number;
  /** UTF-8 bytes of the JSON-serialised metadata object. */
  readonly maxMetadataBytes: number;
  /** Characters (code points) of a title. */
  readonly maxTitleChars: number;
  readonly maxTags: number;
  /** Characters of one tag. */
  readonly maxTagChars: number;
}

/**
 * Everything the service reads from its environment, parsed and validated once at start-up.
 * Nothing else in the code base reads `process.env`.
 */
export class AppConfig {
  readonly host: string;
  readonly port: number;
  /** PostgreSQL connection string; `undefined` means "start the embedded PostgreSQL". */
  readonly databaseUrl: string | undefined;
  /** Absolute path of the directory the embedded PostgreSQL keeps its files under. */
  readonly dataDir: string;
  readonly migrationsRun: boolean;
  readonly dbPoolSize: number;
  /** Empty when authentication is off (only allowed on loopback). */
  readonly apiKeys: readonly ApiKeyEntry[];
  readonly logLevel: string;
  readonly limits: DocumentLimits;
  /** Largest accepted HTTP request body in bytes (REST and MCP). */
  readonly maxRequestBytes: number;
  readonly vectorStore: 'postgres' | 'qdrant';
  readonly qdrantUrl: string | undefined;
  readonly qdrantApiKey: string | undefined;
  readonly qdrantCollection: string;
  readonly embeddingsProvider: 'openai' | 'local';
  readonly openaiApiKey: string | undefined;
  readonly openaiBaseUrl: string | undefined;
  readonly embeddingsModel: string;
  /** `undefined` means "the model's own dimension". */
  readonly embeddingsDimensions: number | undefined;
  readonly vectorSkipPrefixes: readonly string[];
  readonly reindexCron: string;
  /** `false` turns the listener, worker and sweep off (e.g. a migration-only process). */
  readonly vectorSyncEnabled: boolean;
  /**
   * `WEB_CONCURRENCY`: server processes per instance (node:cluster), 1 by default. With more,
   * a primary process forks them: one runs the vector work beside its requests, the others
   * requests only (src/cluster.ts).
   */
  readonly webConcurrency: number;
  /**
   * This process's part in cluster mode, set by the primary through
   * `AGENT_DATA_CLUSTER_ROLE` (not an operator setting): `single` without cluster mode,
   * `vector` for the worker that also runs the vector pipeline, `web` for the others.
   */
  readonly clusterRole: 'single' | 'vector' | 'web';
  /** Whether this process runs the vector worker, listener and sweep (sync on, not a `web` worker). */
  readonly vectorWorkHere: boolean;
  /** Batches of documents (up to 16 each) one process embeds at the same time. */
  readonly vectorWorkerConcurrency: number;
  /** Failed attempts after which a document's vector status becomes `error`. */
  readonly vectorMaxAttempts: number;
  /** Delay before the first retry of a failed document; doubles per attempt, capped at 5 min. */
  readonly vectorRetryBaseMs: number;
  /** A worker's hold on a document: work not done within it is aborted and retried; a crashed worker's documents come back after it. */
  readonly vectorLeaseMs: number;
  /** Most texts in one embeddings request. */
  readonly embeddingsBatchSize: number;
  /** Token limit of one embeddings input; chunks are cut to stay under it. */
  readonly embeddingsMaxInputTokens: number;
  /** Timeout of one embeddings HTTP request (retries come on top). */
  readonly openaiTimeoutMs: number;
  /** Retries of a failed embeddings request (429, 5xx, timeouts) by the openai client. */
  readonly openaiMaxRetries: number;
  readonly mcpPostSse: boolean;
  /** `VECTOR_WORK_THREADS`: worker threads for chunking and local embedding. */
  readonly vectorWorkThreads: number;
  /** `MCP_SSE_KEEPALIVE_MS`: a `: keepalive` comment this often on an SSE answer still being worked out. */
  readonly mcpSseKeepAliveMs: number;
  /**
   * `MCP_TOOL_RESOURCE_LINKS`: which requests get `resource_link` items in tool results:
   * `modern` (2026-07-28 only), `always` (every revision that defines them, from
   * 2025-06-18), `never`.
   */
  readonly mcpToolResourceLinks: 'modern' | 'always' | 'never';
  /** `undefined` means loopback origins only. */
  readonly allowedOrigins: readonly string[] | undefined;
  readonly ingestAllowedHosts: readonly string[];
  readonly ingestAllowHttp: boolean;
  /**
   * Non-public ranges (loopback, private, link-local) that ingest_document may reach anyway,
   * as `address/prefix`: an operator escape hatch for intranets and tests, empty by default.
   * Cloud metadata addresses stay refused whatever this says.
   */
  readonly ingestAllowedPrivateCidrs: readonly string[];
  /** Whole-fetch deadline of ingest_document (DNS, connect, redirects, body), in ms. */
  readonly ingestTimeoutMs: number;
  readonly gptRouteToken: string | undefined;
  /** OAuth access tokens are accepted beside API keys when set (`OAUTH_ISSUER`, docs/oauth.md). */
  readonly oauth: OAuthSettings | undefined;
  /** `RATE_LIMIT_TOOL_CALLS`: MCP `tools/call` per principal; `undefined` is no limit. */
  readonly rateLimitToolCalls: RateLimit | undefined;
  /** `RATE_LIMIT_ADMIN_WRITES`: REST writes under `/documents` per principal. */
  readonly rateLimitAdminWrites: RateLimit | undefined;
  /** `SEARCH_RRF_K`: the k of reciprocal rank fusion (larger flattens the rank differences). */
  readonly searchRrfK: number;
  /** `SEARCH_CANDIDATES`: documents each side of a hybrid search contributes to the fusion. */
  readonly searchCandidates: number;
  /**
   * `SEARCH_VECTOR_WEIGHT`: the vector side's share in the fusion, the lexical side's being 1.
   * Defaults to 0.3 with the local embedder (itself lexical, a weaker copy of the lexical
   * side: the retrieval benchmark ranks best there from 0.3 to 0.5) and 1 with OpenAI
   * embeddings (plain reciprocal rank fusion).
   */
  readonly searchVectorWeight: number;
  readonly shutdownTimeoutMs: number;
  /** `SHUTDOWN_DRAIN_MS`: after SIGTERM, keep answering (with `Connection: close`) this long. */
  readonly shutdownDrainMs: number;
  /** `HTTP_HEADERS_TIMEOUT_MS`: a client's whole request head must arrive within this. */
  readonly httpHeadersTimeoutMs: number;
  /** `HTTP_REQUEST_TIMEOUT_MS`: a client's whole request (head and body) must arrive within this. */
  readonly httpRequestTimeoutMs: number;
  /** `HTTP_KEEPALIVE_TIMEOUT_MS`: an idle keep-alive connection is closed after this. */
  readonly httpKeepAliveTimeoutMs: number;

  constructor(values: Omit<AppConfig, 'authEnabled'>) {
    Object.assign(this, values);
  }

  /** Off only with neither API keys nor OAuth, which is allowed on loopback alone. */
  get authEnabled(): boolean {
    return this.apiKeys.length > 0 || this.oauth !== undefined;
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_SKIP_PREFIXES = 'operations/tasks/comments/,registries/';

/** Parses and validates the environment. Throws {@link ConfigError} naming the first bad variable. */
export function loadConfig(env: Env = process.env): AppConfig {
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };

  const host = read('HOST') ?? '127.0.0.1';
  const port = integer(read, 'PORT', 8080, 0, 65535);
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

  const httpHeadersTimeoutMs = integer(read, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 1000, 600_000);
  const httpRequestTimeoutMs = integer(read, 'HTTP_REQUEST_TIMEOUT_MS', 60_000, 1000, 3_600_000);
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
  const vectorSyncEnabled = boolean(read, 'VECTOR_SYNC_ENABLED', true);
  const clusterRole = oneOf(read, 'AGENT_DATA_CLUSTER_ROLE', ['single', 'vector', 'web'], 'single');
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

  const databaseUrl = read('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(
      'DATABASE_URL',
      'must be a postgres:// or postgresql:// connection string',
    );
  }

  return new AppConfig({
    host,
    port,
    databaseUrl,
    dataDir: resolve(read('DATA_DIR') ?? './.data'),
    migrationsRun: boolean(read, 'MIGRATIONS_RUN', true),
    dbPoolSize: integer(read, 'DB_POOL_SIZE', 20, 1, 500),
    apiKeys,
    logLevel: oneOf(
      read,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      'info',
    ),
    limits: {
      maxBodyBytes: integer(read, 'MAX_BODY_BYTES', 1024 * 1024, 1, 64 * 1024 * 1024),
      maxMetadataBytes: integer(read, 'MAX_METADATA_BYTES', 64 * 1024, 2, 16 * 1024 * 1024),
      maxTitleChars: integer(read, 'MAX_TITLE_CHARS', 300, 1, 10_000),
      maxTags: integer(read, 'MAX_TAGS', 50, 0, 1000),
      maxTagChars: integer(read, 'MAX_TAG_CHARS', 100, 1, 1000),
    },
    maxRequestBytes: integer(read, 'MAX_REQUEST_BYTES', 2 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    vectorStore,
    qdrantUrl,
    qdrantApiKey: read('QDRANT_API_KEY'),
    qdrantCollection: identifier(read, 'QDRANT_COLLECTION', 'kb_documents'),
    embeddingsProvider,
    openaiApiKey,
    openaiBaseUrl,
    embeddingsModel: read('EMBEDDINGS_MODEL') ?? 'text-embedding-3-small',
    embeddingsDimensions: optionalInteger(read, 'EMBEDDINGS_DIMENSIONS', 1, 16_384),
    vectorSkipPrefixes: list(read('VECTOR_SKIP_PREFIXES') ?? DEFAULT_SKIP_PREFIXES),
    reindexCron: cron(read, 'REINDEX_CRON', '*/5 * * * *'),
    vectorSyncEnabled,
    webConcurrency: integer(read, 'WEB_CONCURRENCY', 1, 1, 64),
    clusterRole,
    vectorWorkHere: vectorSyncEnabled && clusterRole !== 'web',
    vectorWorkerConcurrency: integer(read, 'VECTOR_WORKER_CONCURRENCY', 2, 1, 64),
    vectorMaxAttempts: integer(read, 'VECTOR_MAX_ATTEMPTS', 6, 1, 100),
    vectorRetryBaseMs: integer(read, 'VECTOR_RETRY_BASE_MS', 2000, 10, 3_600_000),
    vectorLeaseMs: integer(read, 'VECTOR_LEASE_MS', 15_000, 1000, 600_000),
    embeddingsBatchSize: integer(read, 'EMBEDDINGS_BATCH_SIZE', 128, 1, 2048),
    embeddingsMaxInputTokens: integer(read, 'EMBEDDINGS_MAX_INPUT_TOKENS', 8191, 64, 1_000_000),
    openaiTimeoutMs: integer(read, 'OPENAI_TIMEOUT_MS', 30_000, 100, 600_000),
    openaiMaxRetries: integer(read, 'OPENAI_MAX_RETRIES', 3, 0, 10),
    mcpPostSse: boolean(read, 'MCP_POST_SSE', true),
    // Each thread has its own heap and tokenizer tables (some 40 MB): at most four unless
    // asked, since a container sees the node's cores, not its CPU limit.
    vectorWorkThreads: integer(
      read,
      'VECTOR_WORK_THREADS',
      Math.min(4, Math.max(1, availableParallelism() - 1)),
      1,
      64,
    ),
    mcpSseKeepAliveMs: integer(read, 'MCP_SSE_KEEPALIVE_MS', 15_000, 10, 600_000),
    mcpToolResourceLinks: oneOf(
      read,
      'MCP_TOOL_RESOURCE_LINKS',
      ['modern', 'always', 'never'],
      'modern',
    ),
    allowedOrigins:
      read('ALLOWED_ORIGINS') === undefined ? undefined : list(read('ALLOWED_ORIGINS')!),
    ingestAllowedHosts: list(read('INGEST_ALLOWED_HOSTS') ?? '').map((h) => h.toLowerCase()),
    ingestAllowHttp: boolean(read, 'INGEST_ALLOW_HTTP', false),
    ingestAllowedPrivateCidrs: cidrs(read, 'INGEST_ALLOWED_PRIVATE_CIDRS'),
    ingestTimeoutMs: integer(read, 'INGEST_TIMEOUT_MS', 15_000, 100, 120_000),
    gptRouteToken: secretToken(read, 'GPT_ROUTE_TOKEN'),
    oauth,
    // On by default where others can reach the server; off on loopback unless asked for.
    rateLimitToolCalls: parseRateLimit(read, 'RATE_LIMIT_TOOL_CALLS', '600/min', !loopback),
    rateLimitAdminWrites: parseRateLimit(read, 'RATE_LIMIT_ADMIN_WRITES', '300/min', !loopback),
    searchRrfK: integer(read, 'SEARCH_RRF_K', 60, 1, 1000),
    searchCandidates: integer(read, 'SEARCH_CANDIDATES', 20, 10, 500),
    searchVectorWeight: decimal(
      read,
      'SEARCH_VECTOR_WEIGHT',
      embeddingsProvider === 'local' ? 0.3 : 1,
      0,
      10,
    ),
    shutdownTimeoutMs: integer(read, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    shutdownDrainMs: integer(read, 'SHUTDOWN_DRAIN_MS', 1000, 0, 60_000),
    httpHeadersTimeoutMs,
    httpRequestTimeoutMs,
    httpKeepAliveTimeoutMs: integer(read, 'HTTP_KEEPALIVE_TIMEOUT_MS', 5000, 100, 600_000),
  });
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

function boolean(read: Reader, name: string, fallback: boolean): boolean {
  const raw = read(name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(
  read: Reader,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const raw = read(name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function optionalUrl(read: Reader, name: string): string | undefined {
  const raw = read(name);
  return raw === undefined ? undefined : httpUrl(name, raw).replace(/\/+$/, '');
}

function identifier(read: Reader, name: string, fallback: string): string {
  const value = read(name) ?? fallback;
  if (!/^[A-Za-z0-9_-]{1,255}$/.test(value)) {
    throw new ConfigError(name, 'may contain only letters, digits, _ and -');
  }
  return value;
}

function secretToken(read: Reader, name: string): string | undefined {
  const value = read(name);
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9_-]{24,256}$/.test(value)) {
    throw new ConfigError(name, 'must be 24 to 256 characters of letters, digits, _ and -');
  }
  return value;
}

function cron(read: Reader, name: string, fallback: string): string {
  const value = read(name) ?? fallback;
  const check = validateCronExpression(value);
  if (!check.valid) {
    throw new ConfigError(
      name,
      `is not a valid cron expression ("${value}"): ${check.error?.message ?? 'rejected'}`,
    );
  }
  return value;
}

/** `10.0.0.0/8,127.0.0.1,::1/128`: each entry an IP address with an optional prefix length. */
function cidrs(read: Reader, name: string): string[] {
  return list(read(name) ?? '').map((entry) => {
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
    if (
      family === 0 ||
      rest.length > 0 ||
      (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) ||
      bits > (family === 6 ? 128 : 32)
    ) {
      throw new ConfigError(
        name,
        `"${entry}" is not an IP address or CIDR range such as 10.0.0.0/8`,
      );
    }
    return `${address.toLowerCase()}/${bits}`;
  });
}
