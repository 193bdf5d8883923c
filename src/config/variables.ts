/**
 * Every environment variable the server reads, described once: the parser (load-config.ts)
 * can only read a name of this table (its reader is typed by it), a test fails when a
 * variable of the table is never read, and docs/configuration.md is rendered from it by
 * tools/config-docs.ts (`npm run docs:config`; a test fails when the page is out of date).
 * Its length is the table's: one entry per variable, and nothing else.
 */
export interface Variable {
  readonly group: Group;
  /** What it does, one line, markdown. */
  readonly meaning: string;
  /**
   * The default, written as an operator would write the variable: the parser reads it
   * when the variable is unset, and the docs show it (with `note` after it).
   */
  readonly value?: string;
  readonly note?: string;
  /** For a default that depends on other settings: what the docs say instead of a value. */
  readonly fallback?: string;
  /** Among the few most people set (the docs list them first). */
  readonly common?: true;
}

/**
 * Shares of the vector side in hybrid search that each query starts from, per embedder and
 * kind of query (search/query-kind.ts: one that reads as keywords, a sentence that names some
 * code, a sentence), which its own evidence then moves (search/fusion.ts, vectorWeightFor);
 * chosen on half A of the retrieval benchmark (docs/search.md, "Fusion").
 */
export interface VectorWeights {
  readonly keywords: number;
  readonly sentences: number;
  readonly codeSentences: number;
  /**
   * The weight is used as it is, not moved by each query's evidence (SEARCH_VECTOR_WEIGHT
   * given: the operator chose it).
   */
  readonly fixed?: boolean;
}
// The latent-semantic model knows the words its knowledge base uses together, not a name met
// in one document: a sentence naming code is keywords to it. An embedding model reads the
// sentence around the name.
export const LOCAL_VECTOR_WEIGHTS: VectorWeights = {
  keywords: 0.1,
  sentences: 0.3,
  codeSentences: 0.1,
};
export const MODEL_VECTOR_WEIGHTS: VectorWeights = {
  keywords: 0.2,
  sentences: 0.6,
  codeSentences: 0.6,
};
export const OPENAI_VECTOR_WEIGHTS: VectorWeights = {
  keywords: 0.2,
  sentences: 0.6,
  codeSentences: 0.6,
};

/** The sections of docs/configuration.md, in order. */
export const GROUPS = [
  'Server',
  'Database',
  'Authentication',
  'Access control',
  'OAuth',
  'Documents and requests',
  'MCP',
  'Ingest',
  'Sources',
  'Search and embeddings',
  'Vector pipeline',
  'HTTP and shutdown',
  'Internal',
] as const;
export type Group = (typeof GROUPS)[number];

export const VARIABLES = {
  HOST: { group: 'Server', meaning: 'listen address', value: '127.0.0.1', common: true },
  PORT: { group: 'Server', meaning: 'listen port', value: '8080', common: true },
  WEB_CONCURRENCY: {
    group: 'Server',
    meaning: 'server processes (node:cluster) sharing the port (docs/operations.md, Cluster mode)',
    value: '1',
  },
  LOG_LEVEL: {
    group: 'Server',
    meaning: '`fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`',
    value: 'info',
  },
  LOG_FORMAT: {
    group: 'Server',
    meaning:
      '`auto` (one readable line per entry on a terminal, JSON lines elsewhere), `json`, `pretty`',
    value: 'auto',
  },
  DATABASE_URL: {
    group: 'Database',
    meaning: 'PostgreSQL connection string; unset ⇒ the embedded PostgreSQL',
    fallback: 'unset',
    common: true,
  },
  DATA_DIR: {
    group: 'Database',
    meaning: 'where the embedded PostgreSQL keeps its files',
    value: './.data',
  },
  MIGRATIONS_RUN: {
    group: 'Database',
    meaning: 'apply migrations at start-up (`false` when a Kubernetes job does it)',
    value: 'true',
  },
  DB_POOL_SIZE: {
    group: 'Database',
    meaning:
      "PostgreSQL connections of a process: half for the request path's prepared statements (kept on generic plans), half for the rest",
    value: '20',
  },
  API_KEYS: {
    group: 'Authentication',
    meaning: '`name:key:profile[,profile...]` entries separated by `;`',
    fallback: 'unset ⇒ auth off, loopback only',
    common: true,
  },
  API_KEYS_FILE: {
    group: 'Authentication',
    meaning: 'a file with one `name:key:profiles` entry per line (`#` comments)',
    fallback: 'unset',
  },
  GPT_ROUTE_TOKEN: {
    group: 'Authentication',
    meaning: 'enables `/gpt-mcp/{token}/mcp` (gpt profile, no key)',
    fallback: 'unset',
  },
  RATE_LIMIT_TOOL_CALLS: {
    group: 'Authentication',
    meaning:
      'MCP `tools/call` per principal and window (`120/min`, `10/s`, `off`), shared by replicas',
    value: '600/min',
    note: 'off loopback, else off',
  },
  RATE_LIMIT_ADMIN_WRITES: {
    group: 'Authentication',
    meaning: 'admin REST writes per principal and window',
    value: '300/min',
    note: 'off loopback, else off',
  },
  ACCESS_POLICY: {
    group: 'Access control',
    meaning:
      'which principals read and write which folders, as JSON (docs/access-control.md); unset: every principal reads and writes everything its profile allows',
    fallback: 'unset',
  },
  ACCESS_POLICY_FILE: {
    group: 'Access control',
    meaning:
      'the same policy from a JSON or YAML file, read again when it changes and on SIGHUP (a bad file keeps the last good policy)',
    fallback: 'unset',
  },
  OAUTH_ISSUER: {
    group: 'OAuth',
    meaning: 'accept OAuth access tokens from this issuer beside API keys (docs/oauth.md)',
    fallback: 'unset',
    common: true,
  },
  OAUTH_RESOURCE: {
    group: 'OAuth',
    meaning: 'the URL clients use for this server; tokens are issued for it',
    fallback: '`http://HOST:PORT` on loopback, else required',
  },
  OAUTH_AUDIENCE: {
    group: 'OAuth',
    meaning: '`aud` values accepted (comma-separated)',
    fallback: 'the resource identifiers',
  },
  OAUTH_SCOPE_PROFILES: {
    group: 'OAuth',
    meaning: '`scope:profile[,profile]` entries separated by `;`',
    value: 'kb.read:readonly;kb.write:gpt;kb.admin:internal,gpt-full,admin',
  },
  OAUTH_GROUPS_CLAIM: {
    group: 'OAuth',
    meaning: "the access token's claim listing its groups (`group:G` in ACCESS_POLICY)",
    value: 'groups',
  },
  CONSOLE_OAUTH_CLIENT_ID: {
    group: 'OAuth',
    meaning:
      'the console\'s client id at `OAUTH_ISSUER` (public client, PKCE; redirect URI `<OAUTH_RESOURCE>/console/`): adds "Sign in with" the issuer to the console',
    fallback: 'unset ⇒ the console takes API keys only',
  },
  OAUTH_JWKS_URI: {
    group: 'OAuth',
    meaning: "override the issuer metadata's `jwks_uri`",
    fallback: 'from the metadata',
  },
  OAUTH_ALGORITHMS: {
    group: 'OAuth',
    meaning: 'JWS algorithms accepted (asymmetric only)',
    fallback: 'RS, PS, ES, EdDSA',
  },
  OAUTH_CLOCK_SKEW_SECONDS: {
    group: 'OAuth',
    meaning: 'tolerance on `exp`/`nbf`',
    value: '30',
  },
  OAUTH_HTTP_TIMEOUT_MS: {
    group: 'OAuth',
    meaning: 'bound of each call to the issuer',
    value: '5000',
  },
  OAUTH_INTROSPECTION_CLIENT_ID: {
    group: 'OAuth',
    meaning: 'introspect opaque tokens (RFC 7662) as this client',
    fallback: 'unset',
  },
  OAUTH_INTROSPECTION_CLIENT_SECRET: {
    group: 'OAuth',
    meaning: "that client's secret",
    fallback: 'unset',
  },
  OAUTH_INTROSPECTION_URL: {
    group: 'OAuth',
    meaning: 'the introspection endpoint',
    fallback: 'from the metadata',
  },
  MAX_BODY_BYTES: {
    group: 'Documents and requests',
    meaning: 'largest document body',
    value: '1048576',
    note: '(1 MiB)',
  },
  MAX_METADATA_BYTES: {
    group: 'Documents and requests',
    meaning: 'largest metadata object, as JSON',
    value: '65536',
    note: '(64 KiB)',
  },
  MAX_TITLE_CHARS: {
    group: 'Documents and requests',
    meaning: 'longest title',
    value: '300',
  },
  MAX_TAGS: { group: 'Documents and requests', meaning: 'most tags', value: '50' },
  MAX_TAG_CHARS: {
    group: 'Documents and requests',
    meaning: 'longest tag',
    value: '100',
  },
  MAX_REQUEST_BYTES: {
    group: 'Documents and requests',
    meaning: 'largest HTTP request body',
    value: '2097152',
    note: '(2 MiB)',
  },
  MCP_POST_SSE: {
    group: 'MCP',
    meaning: '`false` ⇒ never answer a POST with SSE',
    value: 'true',
  },
  MCP_TOOL_RESOURCE_LINKS: {
    group: 'MCP',
    meaning: '`resource_link` items in tool results: `modern` (2026-07-28), `always`, `never`',
    value: 'modern',
  },
  MCP_SSE_KEEPALIVE_MS: {
    group: 'MCP',
    meaning: '`: keepalive` comment interval on an SSE answer still being worked out',
    value: '15000',
  },
  MCP_LISTENERS_PER_PRINCIPAL: {
    group: 'MCP',
    meaning:
      'open `subscriptions/listen` streams (and stdio subscriptions) one principal may hold at once',
    value: '10',
  },
  MCP_LISTENERS_MAX: {
    group: 'MCP',
    meaning: 'open change listeners one server process holds at once, all principals together',
    value: '1000',
  },
  MCP_LISTEN_QUEUE: {
    group: 'MCP',
    meaning:
      'notifications kept for a listener that reads slower than changes come (over HTTP, and over stdio once stdout holds 16 KB unread); one more ends its stream, or drops the 2025 subscriptions of a stdio session',
    value: '1000',
  },
  ALLOWED_ORIGINS: {
    group: 'MCP',
    meaning: 'browser origins allowed on MCP routes (comma-separated)',
    fallback: 'loopback origins',
  },
  INGEST_ALLOWED_HOSTS: {
    group: 'Ingest',
    meaning: 'hosts `ingest_document` may fetch from (`*.example.com` allowed)',
    fallback: 'empty ⇒ the tool refuses',
  },
  SOURCES_FILE: {
    group: 'Sources',
    meaning:
      'a YAML or JSON file declaring the sources kept in sync (docs/sources.md); when set, the whole truth: read at start, on change and on SIGHUP, and `/sources` cannot change them',
    fallback: 'unset: sources are declared over `/sources` and kept in PostgreSQL',
  },
  SOURCES_RUNS: {
    group: 'Sources',
    meaning: 'source runs one server process carries out at once',
    value: '2',
  },
  INGEST_ALLOW_HTTP: {
    group: 'Ingest',
    meaning: 'let `ingest_document` fetch plain http',
    value: 'false',
  },
  INGEST_TIMEOUT_MS: {
    group: 'Ingest',
    meaning: 'deadline of a whole fetch',
    value: '15000',
  },
  INGEST_ALLOWED_PRIVATE_CIDRS: {
    group: 'Ingest',
    meaning: 'non-public ranges ingest may reach (e.g. `10.0.0.0/8`)',
    fallback: 'empty',
  },
  EMBEDDINGS_PROVIDER: {
    group: 'Search and embeddings',
    meaning:
      '`local` (an embedding model run in the server, or the latent-semantic model learnt from the documents) or `openai` (any OpenAI-compatible embeddings server)',
    fallback: '`openai` if `OPENAI_API_KEY` is set, else `local`',
  },
  LOCAL_SEMANTIC: {
    group: 'Search and embeddings',
    meaning:
      'with the `local` embedder, what the vector side of search ranks by: `lsa`, term associations learnt from the knowledge base (latent semantic analysis, from 50 documents on; the hashed vectors before), or `off`, the hashed vectors',
    value: 'lsa',
  },
  OPENAI_API_KEY: {
    group: 'Search and embeddings',
    meaning: 'embed with OpenAI (or a compatible server that wants a key)',
    fallback: 'unset',
    common: true,
  },
  OPENAI_BASE_URL: {
    group: 'Search and embeddings',
    meaning: 'any OpenAI-compatible embeddings server',
    fallback: "OpenAI's",
  },
  EMBEDDINGS_MODEL: {
    group: 'Search and embeddings',
    meaning:
      'embedding model: with `local`, one of the models `agent-data models list` knows, installed under `MODELS_DIR`; with `openai`, the name the server knows it by',
    fallback:
      'with `local`: the one model installed under `MODELS_DIR`, else none (the latent-semantic model); with `openai`: `text-embedding-3-small`',
    common: true,
  },
  MODELS_DIR: {
    group: 'Search and embeddings',
    meaning: 'where `agent-data models` installs embedding models and the server finds them',
    fallback: '`DATA_DIR/models`',
  },
  MODELS_BASE_URL: {
    group: 'Search and embeddings',
    meaning:
      'where `agent-data models pull` downloads models from: Hugging Face, or a mirror of it (an Artifactory or Nexus remote)',
    value: 'https://huggingface.co',
  },
  MODELS_TOKEN: {
    group: 'Search and embeddings',
    meaning:
      'a token `agent-data models pull` sends to `MODELS_BASE_URL` (`Authorization: Bearer`, never to the hosts it is redirected to): a Hugging Face token for a gated or private repository, or the credentials a mirror asks for',
    fallback: 'unset',
  },
  MODELS_TIMEOUT_MS: {
    group: 'Search and embeddings',
    meaning:
      '`agent-data models pull` gives up on a server that sends nothing for this long (the part downloaded is kept: running it again resumes)',
    value: '30000',
  },
  MODEL_THREADS: {
    group: 'Search and embeddings',
    meaning:
      "ONNX Runtime's threads for embedding passages with a local model (queries have one of their own)",
    fallback: 'cores − 1, between 1 and 4',
  },
  EMBEDDINGS_DIMENSIONS: {
    group: 'Search and embeddings',
    meaning: 'length of the vectors',
    fallback: "the model's",
  },
  EMBEDDINGS_BATCH_SIZE: {
    group: 'Search and embeddings',
    meaning: 'inputs per embeddings request',
    value: '128',
  },
  EMBEDDINGS_MAX_INPUT_TOKENS: {
    group: 'Search and embeddings',
    meaning: 'token limit per chunk (cl100k tokens) for an OpenAI-compatible server',
    fallback:
      "70 % of a known model's window (358 for a 512-token model), else `8191` (OpenAI's models)",
  },
  OPENAI_TIMEOUT_MS: {
    group: 'Search and embeddings',
    meaning: 'embeddings request timeout',
    value: '30000',
  },
  OPENAI_MAX_RETRIES: {
    group: 'Search and embeddings',
    meaning: 'embeddings request retries (429 and 5xx)',
    value: '3',
  },
  VECTOR_STORE: {
    group: 'Search and embeddings',
    meaning: '`qdrant` or `postgres`',
    fallback: '`qdrant` if `QDRANT_URL` is set, else `postgres`',
  },
  QDRANT_URL: {
    group: 'Search and embeddings',
    meaning: 'Qdrant server, with its port (`http://qdrant:6333`)',
    fallback: 'unset',
    common: true,
  },
  QDRANT_API_KEY: {
    group: 'Search and embeddings',
    meaning: "Qdrant's API key",
    fallback: 'unset',
  },
  QDRANT_COLLECTION: {
    group: 'Search and embeddings',
    meaning: 'Qdrant collection',
    value: 'kb_documents',
  },
  LEXICAL_STORE: {
    group: 'Search and embeddings',
    meaning:
      'where the lexical side of search is indexed: `local` (in every server process, loaded from PostgreSQL) or `qdrant` (sparse vectors in the Qdrant collection: no index in the server; needs `QDRANT_URL`)',
    value: 'local',
  },
  QDRANT_SHARDS: {
    group: 'Search and embeddings',
    meaning: 'shards of the collection, applied when the server creates it',
    value: '1',
  },
  QDRANT_REPLICATION_FACTOR: {
    group: 'Search and embeddings',
    meaning:
      'copies of each shard on different Qdrant nodes, applied when the server creates the collection (2 or more keeps search and writes up while a node is down)',
    value: '1',
  },
  QDRANT_SEGMENTS: {
    group: 'Search and embeddings',
    meaning:
      "segments Qdrant's optimisers keep in each shard of the collection (its `default_segment_number`), applied when the server creates it: more segments index arriving documents without rebuilding the whole graph and search each smaller graph more completely, at some more CPU per search (docs/operations.md)",
    value: '8',
  },
  QDRANT_WRITE_CONSISTENCY: {
    group: 'Search and embeddings',
    meaning:
      'copies of a shard that must take a write before it is acknowledged, applied when the server creates the collection (at most `QDRANT_REPLICATION_FACTOR`)',
    value: '1',
  },
  QDRANT_TIMEOUT_MS: {
    group: 'Search and embeddings',
    meaning: "longest wait for one of Qdrant's answers to the pipeline and start-up",
    value: '10000',
  },
  QDRANT_SEARCH_TIMEOUT_MS: {
    group: 'Search and embeddings',
    meaning:
      'longest wait for Qdrant to answer a search; past it the search answers 503 with `Retry-After`',
    value: '3000',
  },
  SEARCH_CANDIDATES: {
    group: 'Search and embeddings',
    meaning: 'documents each side contributes to the fusion',
    value: '20',
  },
  SEARCH_VECTOR_WEIGHT: {
    group: 'Search and embeddings',
    meaning:
      "the vector side's share in the fusion, 0 to 1 (the lexical side's is the rest), the same for every query: set, it is not moved by each query's evidence",
    fallback: `each query's own, starting from ${MODEL_VECTOR_WEIGHTS.keywords} for a query that reads as keywords and ${MODEL_VECTOR_WEIGHTS.sentences} for a sentence (${MODEL_VECTOR_WEIGHTS.codeSentences} for one naming some code) with an embedding model (local or OpenAI-compatible), ${LOCAL_VECTOR_WEIGHTS.keywords} and ${LOCAL_VECTOR_WEIGHTS.sentences} (${LOCAL_VECTOR_WEIGHTS.codeSentences}) with the latent-semantic model, moved by how sharply each side's scores stand out`,
  },
  VECTOR_SKIP_PREFIXES: {
    group: 'Vector pipeline',
    meaning: 'id prefixes never embedded',
    value: 'operations/tasks/comments/,registries/',
  },
  VECTOR_SYNC_ENABLED: {
    group: 'Vector pipeline',
    meaning: 'run the listener, worker and recovery sweep in this process',
    value: 'true',
  },
  REINDEX_CRON: {
    group: 'Vector pipeline',
    meaning: 'schedule of the recovery sweep',
    value: '*/5 * * * *',
  },
  VECTOR_WORKER_CONCURRENCY: {
    group: 'Vector pipeline',
    meaning: 'embedding batches at once',
    value: '2',
  },
  VECTOR_LEASE_MS: {
    group: 'Vector pipeline',
    meaning: 'claim lease, renewed while a batch runs',
    value: '15000',
  },
  VECTOR_WORK_THREADS: {
    group: 'Vector pipeline',
    meaning: 'threads that chunk and embed (local embedder) beside the request loop',
    fallback: 'cores − 1, between 1 and 4',
  },
  RESTORE_LEXICAL_WAIT_MS: {
    group: 'Vector pipeline',
    meaning:
      "longest a restore's answer waits for lexical search to find the restored documents (the rest follows, and `agent-data restore` shows it); keep it under your proxy's timeout",
    value: '30000',
  },
  VECTOR_MAX_ATTEMPTS: {
    group: 'Vector pipeline',
    meaning: 'attempts before `error`',
    value: '6',
  },
  VECTOR_RETRY_BASE_MS: {
    group: 'Vector pipeline',
    meaning: 'first retry delay (doubling)',
    value: '2000',
  },
  SHUTDOWN_TIMEOUT_MS: {
    group: 'HTTP and shutdown',
    meaning: 'how long SIGTERM waits for in-flight requests',
    value: '10000',
  },
  SHUTDOWN_DRAIN_MS: {
    group: 'HTTP and shutdown',
    meaning: 'after SIGTERM, keep answering (with `Connection: close`) this long',
    value: '1000',
  },
  HTTP_HEADERS_TIMEOUT_MS: {
    group: 'HTTP and shutdown',
    meaning: "a client's request head must arrive within this",
    value: '10000',
  },
  HTTP_REQUEST_TIMEOUT_MS: {
    group: 'HTTP and shutdown',
    meaning: "a client's whole request must arrive within this (longer than the head's)",
    value: '60000',
  },
  HTTP_KEEPALIVE_TIMEOUT_MS: {
    group: 'HTTP and shutdown',
    meaning: "idle keep-alive connections close after this (keep above a proxy's idle timeout)",
    value: '5000',
  },
  AGENT_DATA_CLUSTER_ROLE: {
    group: 'Internal',
    meaning: "set by the cluster primary for its workers (`vector`, `web`); not an operator's",
    value: 'single',
  },
  AGENT_DATA_LOCAL_TOKEN: {
    group: 'Internal',
    meaning:
      "set by the cluster primary for its workers: the credential it announces to local agents in `DATA_DIR/server.json`; not an operator's",
  },
} as const satisfies Record<string, Variable>;

export type VariableName = keyof typeof VARIABLES;

/** The default of `name` as an operator would write it; `undefined` when it has none. */
export function defaultOf(name: VariableName): string | undefined {
  return (VARIABLES[name] as Variable).value;
}
