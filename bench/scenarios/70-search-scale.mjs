// Search at scale (docs/search.md): on a PostgreSQL and a server process of its own, writes
// documents of 2–6 KB through REST up to each size of BENCH_SEARCH_SIZES (5 000, then
// 50 000), waits for the pipeline to index them, and asks every query of the retrieval set
// (bench/retrieval/queries.json) one at a time in each mode. Prints search p50/p95 per mode
// and size, the server's resident memory and the pipeline's documents/s at each size, and
// compares each mode's p95 at the largest size with the smallest (target for hybrid: p95
// < 50 ms at 50 000 documents and at most 2 × its 5 000-document p95).
//
// The documents are the retrieval corpus's sections (real markdown), each copy mixed with a
// paragraph of another section and placed under a folder of its own, so that terms do not
// all become exactly N times as frequent: `scale/c0042/pkg/pino/docs/api.md`.
// `BENCH_DOCS=0 BENCH_ONLY=70 npm run bench` runs it alone.
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { load, round, semanticModelLearnt, startServer, until } from '../lib.mjs';
import { OwnPostgres } from '../own-postgres.mjs';
import { buildCorpus } from '../retrieval/corpus.mjs';
import { QUERIES_FILE } from '../retrieval/run-retrieval.mjs';
import { readFileSync } from 'node:fs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MODES = ['hybrid', 'lexical', 'vector'];
const MIN_BYTES = 2048;
const MAX_BYTES = 6144;
const WRITE_CONCURRENCY = 8;
const KEY = 'search-scale-key-0123456789abcdef';
const HEADERS = { 'X-API-Key': KEY };
const TARGET_P95_MS = 50;

export default async function searchScale({ log, query }) {
  // The bench server's cluster left quiet first: the scenario before this one grew its table
  // to 300 000 rows, which autovacuum would otherwise visit while searches are timed here.
  await query('VACUUM');
  const sizes = (process.env.BENCH_SEARCH_SIZES ?? '5000,50000')
    .split(',')
    .map(Number)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  const corpus = await buildCorpus(root, { warn: (m) => log(`search scale: ${m}`) });
  const queries = JSON.parse(readFileSync(QUERIES_FILE, 'utf8'));
  const own = await ownServer(log);
  const rows = [];
  const first = new Map();
  try {
    let written = 0;
    for (const size of sizes) {
      const started = performance.now();
      const writes = await own.load({
        concurrency: WRITE_CONCURRENCY,
        requests: size - written,
        warmup: 0,
        request: (i) => ({
          method: 'POST',
          path: '/documents',
          headers: { ...HEADERS, 'Content-Type': 'application/json', Prefer: 'return=minimal' },
          body: scaleDocument(corpus, written + i),
        }),
      });
      const wroteMs = performance.now() - started;
      await own.indexed();
      const indexedMs = performance.now() - started;
      await own.learnt();
      const count = size - written;
      written = size;
      const rss = await own.residentMegabytes();
      log(
        `search scale: ${count} documents written in ${round(wroteMs / 1000)} s (${round((count * 1000) / wroteMs)}/s, ${writes.errors} errors), all indexed after ${round(indexedMs / 1000)} s (pipeline ${round((count * 1000) / indexedMs)} documents/s); server RSS ${rss} MB`,
      );
      rows.push({
        scenario: `search scale: write ${count} documents through REST (to ${size})`,
        ...writes,
        compared: `pipeline ${round((count * 1000) / indexedMs)} documents/s; RSS ${rss} MB`,
      });
      for (const mode of MODES) {
        const result = await own.load({
          concurrency: 1,
          requests: queries.length,
          warmup: queries.length,
          request: (i) => ({
            path: `/search?${searchParams(queries[i % queries.length], mode)}`,
            headers: HEADERS,
          }),
        });
        const base = first.get(mode);
        if (base === undefined) first.set(mode, result);
        rows.push({
          scenario: `search scale: ${mode} at ${size} documents`,
          ...result,
          ...(mode === 'hybrid' && size === sizes[sizes.length - 1]
            ? { target_p95_ms: TARGET_P95_MS }
            : {}),
          compared:
            base === undefined
              ? `RSS ${rss} MB`
              : `p95 ${round(result.p95 / base.p95)}× of ${sizes[0]} documents; RSS ${rss} MB`,
        });
      }
    }
  } finally {
    await own.close();
  }
  return rows;
}

/** The `n`th document: a corpus section, a paragraph of another, 2–6 KB, in a folder of its copy. */
export function scaleDocument(corpus, n) {
  const section = corpus[n % corpus.length];
  const copy = Math.floor(n / corpus.length);
  const other = corpus[(n * 7919 + copy * 104729) % corpus.length];
  const paragraphs = other.body.split(/\n\s*\n/).filter((p) => p.trim().length > 80);
  let body = section.body;
  if (paragraphs.length > 0) body += `\n\n${paragraphs[(n + copy) % paragraphs.length]}`;
  for (let k = 1; Buffer.byteLength(body) < MIN_BYTES && k < corpus.length; k++) {
    body += `\n\n${corpus[(n + k * 31) % corpus.length].body}`;
  }
  if (Buffer.byteLength(body) > MAX_BYTES) body = cutAt(body, MAX_BYTES);
  return {
    document_id: `scale/c${String(copy).padStart(4, '0')}/${section.document_id}`,
    title: section.title,
    body,
  };
}

/** `text` cut to at most `bytes` UTF-8 bytes, at the last line break before. */
function cutAt(text, bytes) {
  const cut = Buffer.from(text)
    .subarray(0, bytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  const line = cut.lastIndexOf('\n');
  return line > bytes / 2 ? cut.slice(0, line) : cut;
}

function searchParams(query, mode) {
  const params = new URLSearchParams({ query: query.query, limit: '10', mode });
  if (query.prefix) params.set('prefix', query.prefix);
  return params.toString();
}

async function ownServer(log) {
  const cluster = await OwnPostgres.create();
  const server = await startServer({
    databaseUrl: cluster.url,
    env: { API_KEYS: `scale:${KEY}:admin`, RATE_LIMIT_ADMIN_WRITES: 'off' },
  });
  const get = async (path) => fetch(`${server.baseUrl}${path}`, { headers: HEADERS });
  log(`search scale: own PostgreSQL on port ${cluster.port}, own server on ${server.baseUrl}`);
  return {
    load: (options) => load({ baseUrl: server.baseUrl, ...options }),
    async indexed() {
      await until(
        async () => {
          const status = await (await get('/admin/vectors/status')).json();
          return (status.counts?.pending ?? 0) === 0 && (status.leased ?? 0) === 0;
        },
        30 * 60_000,
        { what: 'the pipeline to index every document', everyMs: 250 },
      );
    },
    /**
     * With the local embedder the vector side ranks by a model learnt from the documents:
     * searches are measured once it has been learnt from (nearly) all of them.
     */
    async learnt() {
      await semanticModelLearnt(server.baseUrl, HEADERS);
    },
    async residentMegabytes() {
      const text = await (await get('/metrics')).text();
      const bytes = Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1]);
      return Math.round(bytes / 1024 / 1024);
    },
    async close() {
      await server.stop();
      await cluster.destroy();
    },
  };
}
