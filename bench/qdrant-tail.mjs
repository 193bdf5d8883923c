// Search latency in qdrant mode (LEXICAL_STORE=qdrant), this build against another side by side
// in one run: one Qdrant node (bench/qdrant.mjs), one PostgreSQL, BENCH_TAIL_DOCS documents of
// 2–6 KB written through REST by this build's server; then, when BENCH_TAIL_BEFORE names
// another checkout with a build (its dist/), a server of that build on the same database and
// collection (qdrant mode holds no index in the process: a second server searches the same
// collection at once). Every query of the retrieval set in each mode, one at a time, passes
// alternating between the servers so that both see the same machine; p50/p95/p99 per server
// and mode, the searches over 40 ms (Linux's delayed-acknowledgement timer), and Qdrant's own
// mean time per batch query from its telemetry over the same passes.
//
//   BENCH_TAIL_BEFORE=/tmp/before BENCH_TAIL_DOCS=5000 node bench/qdrant-tail.mjs
//
// docs/performance.md ("Going past one pod") says what it measured.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, round, startServer, summarize, until } from './lib.mjs';
import { qdrantMode, startQdrant } from './qdrant.mjs';
import { buildCorpus } from './retrieval/corpus.mjs';
import { QUERIES_FILE } from './retrieval/run-retrieval.mjs';
import { writeRequest } from './search-scale/documents.mjs';
import { HEADERS, scaleServer } from './search-scale/scale-server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const MODES = ['hybrid', 'lexical', 'vector'];
const SLOW_MS = 40;
const docs = Number(process.env.BENCH_TAIL_DOCS ?? 2000);
const passes = Number(process.env.BENCH_TAIL_PASSES ?? 3);
const before = process.env.BENCH_TAIL_BEFORE;
const log = (message) => process.stdout.write(`${new Date().toISOString()} ${message}\n`);

const owned = [];
try {
  const corpus = await buildCorpus(root, { warn: log });
  const queries = JSON.parse(readFileSync(QUERIES_FILE, 'utf8'));
  const qdrant = await startQdrant();
  owned.push(() => qdrant.stop());
  const after = await scaleServer({ store: 'qdrant', qdrant, log });
  owned.push(() => after.close());
  const started = performance.now();
  const wrote = await after.load({
    concurrency: 8,
    requests: docs,
    warmup: 0,
    request: (i) => writeRequest(corpus, i, HEADERS),
  });
  await after.indexed();
  const indexedS = (performance.now() - started) / 1000;
  await after.learnt();
  await qdrant.optimised(after.collection);
  log(
    `${docs} documents written (${wrote.errors} errors) and indexed in ${round(indexedS)} s by this build (${round(docs / indexedS)} documents/s), the semantic model learnt`,
  );

  const servers = [{ name: 'this build', load: after.load }];
  if (before) {
    const other = await startServer({
      databaseUrl: after.cluster.url,
      env: {
        API_KEYS: `scale:${HEADERS['X-API-Key']}:admin`,
        ...qdrantMode(qdrant.url, after.collection),
      },
      root: before,
    });
    owned.push(() => other.stop());
    await until(
      async () =>
        (await fetch(`${other.baseUrl}/search?query=backup`, { headers: HEADERS })).status === 200,
      60_000,
      { what: 'a first search on the other build' },
    );
    servers.push({
      name: `build at ${before}`,
      load: (options) => load({ baseUrl: other.baseUrl, ...options }),
    });
  }

  const pass = (server, mode) =>
    server.load({
      concurrency: 1,
      requests: queries.length,
      warmup: 0,
      request: (i) => ({ path: `/search?${searchParams(queries[i], mode)}`, headers: HEADERS }),
    });
  // Unmeasured: each server's first searches (its connections to Qdrant, code paths warmed).
  for (const server of servers) for (const mode of MODES) await pass(server, mode);

  const telemetryBefore = await batchQueryTelemetry(qdrant.url);
  const loadBefore = round(loadavg()[0]);
  const latencies = new Map();
  for (let p = 0; p < passes; p++) {
    for (const mode of MODES) {
      for (const server of p % 2 === 0 ? servers : [...servers].reverse()) {
        const key = `${server.name}|${mode}`;
        const result = await passLatencies(server, mode, queries);
        latencies.set(key, [...(latencies.get(key) ?? []), ...result]);
      }
    }
  }
  const telemetryAfter = await batchQueryTelemetry(qdrant.url);
  const count = telemetryAfter.count - telemetryBefore.count;
  const qdrantMs = round((telemetryAfter.total - telemetryBefore.total) / 1000 / count);
  log(
    `load average ${loadBefore} → ${round(loadavg()[0])}; Qdrant's own time per batch query: ${qdrantMs} ms on average over ${count} (its telemetry)`,
  );
  for (const mode of MODES) {
    for (const server of servers) {
      const times = latencies.get(`${server.name}|${mode}`);
      const s = summarize(times);
      const slow = times.filter((ms) => ms > SLOW_MS).length;
      log(
        `${mode.padEnd(7)} ${server.name}: p50 ${s.p50} / p95 ${s.p95} / p99 ${s.p99} / max ${s.max} ms; over ${SLOW_MS} ms ${slow} of ${s.requests} (${round((100 * slow) / s.requests)} %)`,
      );
    }
  }
  // The pass above timed each request on its own: load() reports summaries only.
  async function passLatencies(server, mode, list) {
    const times = [];
    for (let i = 0; i < list.length; i++) {
      const r = await server.load({
        concurrency: 1,
        requests: 1,
        warmup: 0,
        request: () => ({ path: `/search?${searchParams(list[i], mode)}`, headers: HEADERS }),
      });
      if (r.errors > 0)
        throw new Error(`search ${mode} on ${server.name}: ${JSON.stringify(r.statuses)}`);
      times.push(r.max);
    }
    return times;
  }
} finally {
  for (const close of owned.reverse()) await close().catch((e) => log(e.message));
}

/** Qdrant's count and total time (µs) of batch queries answered, from its telemetry. */
async function batchQueryTelemetry(url) {
  const response = await fetch(`${url}/telemetry?details_level=1`);
  const { result } = await response.json();
  const answered =
    result.requests.rest.responses['POST /collections/{collection_name}/points/query/batch']?.[
      '200'
    ] ?? {};
  return { count: answered.count ?? 0, total: answered.total_duration_micros ?? 0 };
}

function searchParams(query, mode) {
  const params = new URLSearchParams({ query: query.query, limit: '10', mode });
  if (query.prefix) params.set('prefix', query.prefix);
  return params.toString();
}
