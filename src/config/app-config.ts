import type { OAuthSettings, RateLimit } from './auth-config';
import type { Profile } from './config-values';

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
/** The Qdrant collection's settings when the server creates it, and the waits for Qdrant. */
export interface QdrantSettings {
  /** `QDRANT_SHARDS`. */
  readonly shards: number;
  /** `QDRANT_REPLICATION_FACTOR`: copies of each shard, on different nodes. */
  readonly replicationFactor: number;
  /** `QDRANT_WRITE_CONSISTENCY`: copies that must take a write before it is acknowledged. */
  readonly writeConsistency: number;
  /** `QDRANT_SEGMENTS`: segments Qdrant's optimisers keep in each shard. */
  readonly segments: number;
  /** `QDRANT_TIMEOUT_MS`: the pipeline's and start-up's calls. */
  readonly timeoutMs: number;
  /** `QDRANT_SEARCH_TIMEOUT_MS`: a search's call. */
  readonly searchTimeoutMs: number;
}

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
  /**
   * `ACCESS_POLICY` (its JSON text) or `ACCESS_POLICY_FILE` (an absolute path): which
   * principals read and write which folders (src/access/); `undefined`: no policy.
   */
  readonly accessPolicy: { readonly text: string } | { readonly file: string } | undefined;
  readonly logLevel: string;
  /** `auto`: readable lines when the log goes to a terminal, JSON lines otherwise. */
  readonly logFormat: 'auto' | 'json' | 'pretty';
  readonly limits: DocumentLimits;
  /** Largest accepted HTTP request body in bytes (REST and MCP). */
  readonly maxRequestBytes: number;
  readonly vectorStore: 'postgres' | 'qdrant';
  readonly qdrantUrl: string | undefined;
  readonly qdrantApiKey: string | undefined;
  readonly qdrantCollection: string;
  /**
   * `LEXICAL_STORE`: where the lexical side of search is indexed, `local` (every server holds
   * it in memory) or `qdrant` (sparse vectors beside the dense ones in the Qdrant collection).
   */
  readonly lexicalStore: 'local' | 'qdrant';
  /** How the server makes its Qdrant collection, and how long it waits for Qdrant. */
  readonly qdrant: QdrantSettings;
  readonly embeddingsProvider: 'openai' | 'local';
  /**
   * `LOCAL_SEMANTIC`: with the local embedder, whether the vector side of search ranks by a
   * latent-semantic model learnt from the knowledge base (`lsa`) or by the hashed vectors.
   */
  readonly localSemantic: 'lsa' | 'off';
  readonly openaiApiKey: string | undefined;
  readonly openaiBaseUrl: string | undefined;
  /**
   * With `openai`, the model asked of the server. With `local`, the installed model to run
   * (a name of models/known-models.ts), or `undefined`: the server chooses at start
   * (vectors/embedders/embeddings-choice.ts).
   */
  readonly embeddingsModel: string | undefined;
  /** Absolute path of the folder holding installed embedding models. */
  readonly modelsDir: string;
  /** Where `agent-data models pull` downloads from (no trailing slash). */
  readonly modelsBaseUrl: string;
  /** `MODELS_TOKEN`: sent as a bearer token to `modelsBaseUrl`'s origin, and to no other. */
  readonly modelsToken: string | undefined;
  /** `MODELS_TIMEOUT_MS`: a download with no byte for this long is stopped (and resumable). */
  readonly modelsTimeoutMs: number;
  /** ONNX Runtime threads for embedding passages with a local model. */
  readonly modelThreads: number;
  /** `undefined` means "the model's own dimension". */
  readonly embeddingsDimensions: number | undefined;
  readonly vectorSkipPrefixes: readonly string[];
  readonly reindexCron: string;
  /** `false` turns the listener, worker and sweep off (e.g. a migration-only process). */
  readonly vectorSyncEnabled: boolean;
  /**
   * `WEB_CONCURRENCY`: server processes per instance (node:cluster), 1 by default. With more,
   * a primary process forks them: one runs the vector work beside its requests, the others
   * requests only (src/primary/primary.ts).
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
  /** `RESTORE_LEXICAL_WAIT_MS`: how long a restore's answer waits for its lexical pass. */
  readonly restoreLexicalWaitMs: number;
  /** Most texts in one embeddings request. */
  readonly embeddingsBatchSize: number;
  /** Token limit of one embeddings input; chunks are cut to stay under it. */
  /** `EMBEDDINGS_MAX_INPUT_TOKENS` when set (otherwise the embedder's own limit). */
  readonly embeddingsMaxInputTokens: number | undefined;
  /** Timeout of one embeddings HTTP request (retries come on top). */
  readonly openaiTimeoutMs: number;
  /** Retries of a failed embeddings request (429, 5xx, timeouts) by the openai client. */
  readonly openaiMaxRetries: number;
  readonly mcpPostSse: boolean;
  /** `VECTOR_WORK_THREADS`: worker threads for chunking and local embedding. */
  readonly vectorWorkThreads: number;
  /** `MCP_SSE_KEEPALIVE_MS`: a `: keepalive` comment this often on an SSE answer still being worked out. */
  readonly mcpSseKeepAliveMs: number;
  /** `MCP_LISTENERS_PER_PRINCIPAL`: open change listeners one principal may hold. */
  readonly mcpListenersPerPrincipal: number;
  /** `MCP_LISTENERS_MAX`: open change listeners in this process, all principals together. */
  readonly mcpListenersMax: number;
  /** `MCP_LISTEN_QUEUE`: notifications kept for a slow listener before its stream is ended. */
  readonly mcpListenQueue: number;
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
   * The environment as the configuration read it: the variables a source names for its
   * credentials (`token: { env: NAME }`), and the environment of the git processes it runs.
   */
  readonly environment: Readonly<Record<string, string | undefined>>;
  /** SOURCES_FILE, resolved; `null` when sources are declared over the API. */
  readonly sourcesFile: string | null;
  readonly sourcesRuns: number;
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
  /** `SEARCH_CANDIDATES`: documents each side of a hybrid search contributes to the fusion. */
  readonly searchCandidates: number;
  /**
   * `SEARCH_VECTOR_WEIGHT`: the vector side's share in the fusion, 0 to 1 (the lexical
   * side's is the rest); defaults per embedder, chosen on the retrieval benchmark
   * (docs/search.md).
   */
  /** `SEARCH_VECTOR_WEIGHT` when set; otherwise the embedder's own (embeddings-choice.ts). */
  readonly searchVectorWeight: number | undefined;
  readonly shutdownTimeoutMs: number;
  /** `SHUTDOWN_DRAIN_MS`: after SIGTERM, keep answering (with `Connection: close`) this long. */
  readonly shutdownDrainMs: number;
  /** `HTTP_HEADERS_TIMEOUT_MS`: a client's whole request head must arrive within this. */
  readonly httpHeadersTimeoutMs: number;
  /** `HTTP_REQUEST_TIMEOUT_MS`: a client's whole request (head and body) must arrive within this. */
  readonly httpRequestTimeoutMs: number;
  /** `HTTP_KEEPALIVE_TIMEOUT_MS`: an idle keep-alive connection is closed after this. */
  readonly httpKeepAliveTimeoutMs: number;

  /**
   * Whether leaving the embedded PostgreSQL waits until it has stopped, when this process is
   * its last user (default): a server's container must not end under it. `agent-data mcp`
   * only asks it to stop, since its client gives it two seconds to exit. Not a variable.
   */
  readonly embeddedStopWaits?: boolean;

  /**
   * How long a stopping pipeline lets the batches in progress finish before it aborts them
   * and gives their documents back to the queue (5 s when unset). `agent-data mcp` gives them
   * a second: its client ends it by force a few seconds after closing stdin, and a process
   * ended so leaves the embedded PostgreSQL running. Not a variable.
   */
  readonly pipelineStopGraceMs?: number;

  /**
   * How long a stopping process may spend writing the lexical index's snapshot (10 s when
   * unset; the snapshot kept stays when it is given up). `agent-data mcp` takes a second and a
   * half, for the reason above: a large index's snapshot is then written during its session,
   * when it has been quiet a while. Not a variable.
   */
  readonly stopSnapshotWithinMs?: number;

  /**
   * The credential of agents on this machine without an API key (DATA_DIR/server.json,
   * src/local-server/): made by the server as it starts, handed to cluster workers as
   * `AGENT_DATA_LOCAL_TOKEN`. `undefined` admits no agent that way.
   */
  readonly localAgentToken?: string;

  constructor(values: Omit<AppConfig, 'authEnabled'>) {
    Object.assign(this, values);
  }

  /** Off only with neither API keys nor OAuth, which is allowed on loopback alone. */
  get authEnabled(): boolean {
    return this.apiKeys.length > 0 || this.oauth !== undefined;
  }
}

/**
 * Whether SIGHUP means "read the access policy or sources file again" (either is a file);
 * otherwise it is a closed terminal, and the server stops as on SIGTERM.
 */
export function hangUpReloads(config: AppConfig): boolean {
  return (
    (config.accessPolicy !== undefined && 'file' in config.accessPolicy) ||
    config.sourcesFile !== null
  );
}
