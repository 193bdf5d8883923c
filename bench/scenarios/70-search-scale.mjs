// Search at scale (docs/search.md, docs/performance.md): on a PostgreSQL and a server process
// of its own, writes documents of 2–6 KB through REST up to each size of BENCH_SEARCH_SIZES
// (5 000, 50 000, then 250 000), waits for the pipeline to index them, and asks every query of
// the retrieval set (bench/retrieval/queries.json) one at a time in each mode. At each size
// it prints search p50/p95 per mode, the pipeline's documents/s, the server's peak resident
// memory while the documents arrived (VmHWM) and its memory once they are indexed, then
// restarts the server and times restart-to-ready (spawn to an index loaded whole with its
// semantic model: target ≤ 30 s) and the memory after it. Memory is also given as MB per
// 10 000 documents between sizes (target ≤ 60). After the last size, the same database is
// served by WEB_CONCURRENCY=4 and the whole process tree's memory compared with one process's
// (target ≤ 1.3 ×), as proportional set sizes (shared pages counted once, as a pod is charged). Hybrid's p95 target: < 50 ms at every size.
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
import { readdirSync, readFileSync } from 'node:fs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MODES = ['hybrid', 'lexical', 'vector'];
const MIN_BYTES = 2048;
const MAX_BYTES = 6144;
const WRITE_CONCURRENCY = 8;
const KEY = 'search-scale-key-0123456789abcdef';
const HEADERS = { 'X-API-Key': KEY };
const TARGET_P95_MS = 50;
const TARGET_READY_MS = 30_000;
const TARGET_MB_PER_10K = 60;
const TARGET_WORKERS_RATIO = 1.3;
const CLUSTER_WORKERS = 4;

export default async function searchScale({ log, query }) {
  // The bench server's cluster left quiet first: the scenario before this one grew its table
  // to 300 000 rows, which autovacuum would otherwise visit while searches are timed here.
  await query('VACUUM');
  const sizes = (process.env.BENCH_SEARCH_SIZES ?? '5000,50000,250000')
    .split(',')
    .map(Number)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  const corpus = await buildCorpus(root, { warn: (m) => log(`search scale: ${m}`) });
  const queries = JSON.parse(readFileSync(QUERIES_FILE, 'utf8'));
  const own = await ownServer(log);
  const rows = [];
  const memory = [];
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
      const peak = own.peakMegabytes();
      log(
        `search scale: peak RSS while they arrived ${peak} MB; ${count} documents written in ${round(wroteMs / 1000)} s (${round((count * 1000) / wroteMs)}/s, ${writes.errors} errors), all indexed after ${round(indexedMs / 1000)} s (pipeline ${round((count * 1000) / indexedMs)} documents/s); server RSS ${rss} MB`,
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
      const restart = await own.restart(size);
      log(
        `search scale: restart at ${size} documents ready to search in ${round(restart.readyMs / 1000)} s (target ≤ ${TARGET_READY_MS / 1000} s); RSS after it ${restart.rss} MB`,
      );
      rows.push({
        scenario: `search scale: restart to ready at ${size} documents`,
        ready_ms: restart.readyMs,
        target_ready_ms: TARGET_READY_MS,
        compared: `ready in ${round(restart.readyMs / 1000)} s (target ≤ ${TARGET_READY_MS / 1000} s): ${restart.readyMs <= TARGET_READY_MS ? 'PASS' : 'MISS'}; RSS after restart ${restart.rss} MB`,
      });
      memory.push({ size, peak, indexed: rss, restarted: restart.rss });
    }
    rows.push(...memoryRows(memory, log));
    rows.push(await workersRow(own, sizes[sizes.length - 1], log));
  } finally {
    await own.close();
  }
  return rows;
}

/** MB per 10 000 documents between consecutive sizes, at the peak and once indexed. */
function memoryRows(memory, log) {
  const rows = [];
  for (let k = 1; k < memory.length; k++) {
    const [a, b] = [memory[k - 1], memory[k]];
    const per = (key) => round(((b[key] - a[key]) * 10_000) / (b.size - a.size));
    const slopes = { peak: per('peak'), indexed: per('indexed'), restarted: per('restarted') };
    const pass = Object.values(slopes).every((mb) => mb <= TARGET_MB_PER_10K);
    log(
      `search scale: memory ${a.size} → ${b.size} documents, MB per 10 000: peak ${slopes.peak}, indexed ${slopes.indexed}, after a restart ${slopes.restarted} (target ≤ ${TARGET_MB_PER_10K}): ${pass ? 'PASS' : 'MISS'}`,
    );
    rows.push({
      scenario: `search scale: memory from ${a.size} to ${b.size} documents`,
      mb_per_10k_peak: slopes.peak,
      mb_per_10k_indexed: slopes.indexed,
      mb_per_10k_restarted: slopes.restarted,
      target_mb_per_10k: TARGET_MB_PER_10K,
      compared: `peak ${a.peak} → ${b.peak} MB, indexed ${a.indexed} → ${b.indexed} MB, after a restart ${a.restarted} → ${b.restarted} MB: ${pass ? 'PASS' : 'MISS'}`,
    });
  }
  return rows;
}

/** The memory of the whole process tree with one process and with four workers, same database. */
async function workersRow(own, size, log) {
  const one = await own.treeMegabytes(1, size);
  const many = await own.treeMegabytes(CLUSTER_WORKERS, size);
  const ratio = round(many.total / one.total);
  log(
    `search scale: at ${size} documents, proportional set size of the process tree: 1 process ${one.total} MB, ${CLUSTER_WORKERS} workers ${many.total} MB (${many.parts}): ${ratio}× (target ≤ ${TARGET_WORKERS_RATIO}×); resident sizes summed: ${one.rss} and ${many.rss} MB (${round(many.rss / one.rss)}×)`,
  );
  return {
    scenario: `search scale: memory of ${CLUSTER_WORKERS} workers against one at ${size} documents`,
    pss_one_mb: one.total,
    pss_workers_mb: many.total,
    rss_one_mb: one.rss,
    rss_workers_mb: many.rss,
    ratio,
    target_ratio: TARGET_WORKERS_RATIO,
    compared: `PSS ${ratio}× (${many.parts}): ${ratio <= TARGET_WORKERS_RATIO ? 'PASS' : 'MISS'}; RSS summed ${round(many.rss / one.rss)}×`,
  };
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
  const env = { API_KEYS: `scale:${KEY}:admin`, RATE_LIMIT_ADMIN_WRITES: 'off' };
  let server = await startServer({ databaseUrl: cluster.url, env });
  const get = async (path) =>
    fetch(`${server.baseUrl}${path}`, { headers: HEADERS, signal: AbortSignal.timeout(60_000) });
  const status = async () => (await get('/admin/vectors/status')).json();
  /** Every document's record in the index loaded, the vectors loaded, the model learnt. */
  const searchable = async (size) => {
    await until(
      async () => {
        const s = await status().catch(() => ({}));
        return s.lexical?.loaded === true && s.lexical.documents >= size && s.store?.ready === true;
      },
      10 * 60_000,
      { what: 'the index to be loaded', everyMs: 100 },
    );
    await semanticModelLearnt(server.baseUrl, HEADERS);
  };
  const searches = async (n) => {
    // A new connection each: in cluster mode the workers take turns.
    for (let i = 0; i < n; i++) {
      const response = await fetch(
        `${server.baseUrl}/search?query=${encodeURIComponent(QUESTIONS[i % QUESTIONS.length])}`,
        { headers: { ...HEADERS, Connection: 'close' } },
      );
      if (response.status !== 200) throw new Error(`search scale: search ${response.status}`);
      await response.arrayBuffer();
    }
  };
  log(`search scale: own PostgreSQL on port ${cluster.port}, own server on ${server.baseUrl}`);
  return {
    load: (options) => load({ baseUrl: server.baseUrl, ...options }),
    async indexed() {
      await until(
        async () => {
          const s = await status();
          return (s.counts?.pending ?? 0) === 0 && (s.leased ?? 0) === 0;
        },
        60 * 60_000,
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
    /** The process's peak resident memory since it started (the kernel's high-water mark). */
    peakMegabytes() {
      return Math.round(procStatus(server.child.pid, 'VmHWM') / 1024);
    },
    /** Stops the server, starts it again on the same database: ready time and memory. */
    async restart(size) {
      await server.stop();
      const started = performance.now();
      server = await startServer({ databaseUrl: cluster.url, env });
      await searchable(size);
      const readyMs = Math.round(performance.now() - started);
      await searches(40);
      return { readyMs, rss: await this.residentMegabytes() };
    },
    /** The resident memory of the server's whole process tree with `workers` processes. */
    async treeMegabytes(workers, size) {
      await server.stop();
      server = await startServer({
        databaseUrl: cluster.url,
        env: { ...env, WEB_CONCURRENCY: String(workers) },
      });
      await searchable(size);
      await searches(40);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const tree = processTree(server.child.pid);
      const rss = tree.map((pid) => Math.round(procStatus(pid, 'VmRSS') / 1024));
      const pss = tree.map((pid) => Math.round(proportionalKb(pid) / 1024));
      return {
        total: pss.reduce((a, b) => a + b, 0),
        parts: pss.join(' + '),
        rss: rss.reduce((a, b) => a + b, 0),
      };
    },
    async close() {
      await server.stop();
      await cluster.destroy();
    },
  };
}

/** Questions of the kinds agents ask, for the searches between the memory readings. */
const QUESTIONS = [
  'how do backups work',
  'retry with exponential backoff',
  'pino transport',
  'configure the logging level',
  'maxRetries',
];

/** A field of /proc/PID/status in kB (VmRSS, VmHWM). */
function procStatus(pid, field) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

/**
 * A process's proportional set size in kB: its private pages, and its share of the pages it
 * shares with others (the node binary's code, mapped by every worker). Summed over a process
 * tree it counts each page once, as the kernel charges a pod (its memory cgroup); a sum of
 * resident sizes counts the binary once per worker (some 46 MB each).
 */
function proportionalKb(pid) {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return Number(/^Pss:\s+(\d+)/m.exec(text)?.[1] ?? 0);
}

/** `pid` and its descendants, from /proc. */
function processTree(pid) {
  const parents = new Map();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  }
  return tree;
}
