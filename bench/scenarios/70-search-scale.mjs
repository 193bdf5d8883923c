// Search at scale (docs/search.md, docs/performance.md), with the lexical side in the server's
// memory (`local`) and in Qdrant (`qdrant`, LEXICAL_STORE=qdrant) measured side by side in the
// same run: each store on a PostgreSQL and a server of its own (the Qdrant one on a Qdrant node
// the scenario starts: bench/qdrant.mjs), the same documents of 2–6 KB written through REST up
// to each size of BENCH_SEARCH_SIZES (5 000, 50 000, then 250 000), one store after the other.
// At each size, per store: the pipeline's documents/s (from the first write to every document
// indexed; Qdrant's against the local index's: target ≥ 0.8 ×), search p50/p95 one query at a
// time in each mode over every query of the retrieval set (hybrid p95 < 50 ms at the largest
// size), and a restart (spawn to searchable: every document's record in the local index and its
// semantic model, or the Qdrant store ready and its model learnt, and a first search answered;
// local ≤ 30 s, qdrant < 5 s) with the resident memory after it, against an empty server's
// (qdrant: within 25 MB); the local server's peak memory while documents arrived and MB per
// 10 000 documents between sizes (≤ 60); and Qdrant itself for sizing: its resident memory
// and its storage folder on disk, per 10 000 documents, once its optimisers are done, and after
// a restart of the node. After the last size: the whole process tree's memory (proportional set
// sizes: shared pages counted once, as a pod is charged) of one local server, of four cluster
// workers of it (target ≤ 1.3 ×), and of four workers in qdrant mode (target: less than the one
// local server).
//
// BENCH_SEARCH_STORES=local or =qdrant measures one store; without a Qdrant binary the qdrant
// rows say so in one line and are skipped. Everything is also written to
// bench/results/search-scale-latest.json. `BENCH_DOCS=0 BENCH_ONLY=70 npm run bench` runs it alone.
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { round } from '../lib.mjs';
import { qdrantBinary, startQdrant } from '../qdrant.mjs';
import { buildCorpus } from '../retrieval/corpus.mjs';
import { QUERIES_FILE } from '../retrieval/run-retrieval.mjs';
import { scaleDocument, writeRequest } from '../search-scale/documents.mjs';
import { HEADERS, scaleServer } from '../search-scale/scale-server.mjs';

export { scaleDocument };

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MODES = ['hybrid', 'lexical', 'vector'];
const WRITE_CONCURRENCY = 8;
const TARGET_P95_MS = 50;
const TARGET_READY_MS = { local: 30_000, qdrant: 5_000 };
const TARGET_MB_PER_10K = 60;
const TARGET_WORKERS_RATIO = 1.3;
const TARGET_PIPELINE_RATIO = 0.8;
const TARGET_EMPTY_MB = 25;
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
  const rows = [];
  const stores = (process.env.BENCH_SEARCH_STORES ?? 'local,qdrant').split(',').filter(Boolean);
  const binary = qdrantBinary();
  if (stores.includes('qdrant') && !binary.path) {
    log(`search scale: the qdrant rows are skipped: ${binary.missing}`);
    rows.push({ scenario: 'search scale: qdrant', compared: `skipped: ${binary.missing}` });
    stores.splice(stores.indexOf('qdrant'), 1);
  }
  const corpus = await buildCorpus(root, { warn: (m) => log(`search scale: ${m}`) });
  const queries = JSON.parse(readFileSync(QUERIES_FILE, 'utf8'));
  const report = { date: new Date().toISOString(), sizes, stores, steps: [] };
  const owned = [];
  try {
    const qdrant = stores.includes('qdrant') ? await startQdrant() : undefined;
    if (qdrant) owned.push({ close: () => qdrant.stop() });
    const servers = {};
    for (const store of stores) {
      servers[store] = await scaleServer({ store, qdrant, log });
      owned.push(servers[store]);
    }
    // An empty server's memory, as each is measured later: after a restart and 40 searches.
    const empty = {};
    for (const store of stores) empty[store] = await servers[store].restart(0);
    log(
      `search scale: empty servers after a restart: ${stores.map((s) => `${s} ${empty[s].rss} MB, ready in ${empty[s].readyMs} ms (${empty[s].cpuMs} ms of CPU)`).join('; ')}${qdrant ? `; Qdrant ${JSON.stringify(qdrant.residentMb())} MB` : ''}`,
    );
    report.empty = {
      ...empty,
      qdrant: qdrant && { memory: qdrant.residentMb(), diskMb: qdrant.diskMb() },
    };
    let written = 0;
    for (const size of sizes) {
      const step = { size, stores: {} };
      const count = size - written;
      for (const store of stores) {
        step.stores[store] = await grow(servers[store], corpus, written, count, log);
        if (store === 'qdrant') step.qdrant = await qdrantAfter(qdrant, servers.qdrant, size, log);
      }
      written = size;
      for (const store of stores) {
        step.stores[store].searches = await searchTimes(servers[store], queries);
        step.stores[store].restart = await servers[store].restart(size);
        log(
          `search scale (${store}): at ${size} documents, ${MODES.map((m) => `${m} p50 ${step.stores[store].searches[m].p50} / p95 ${step.stores[store].searches[m].p95} ms`).join(', ')}; stopped in ${step.stores[store].restart.stopMs} ms, restart to ready ${step.stores[store].restart.readyMs} ms (${step.stores[store].restart.cpuMs} ms of CPU; ${JSON.stringify(step.stores[store].restart.phases)}), RSS after it ${step.stores[store].restart.rss} MB`,
        );
      }
      if (qdrant) {
        const restartMs = await qdrant.restart();
        await servers.qdrant.searches(40);
        step.qdrant.afterRestart = { restartMs, memory: qdrant.residentMb() };
        log(
          `search scale: Qdrant restarted in ${restartMs} ms: ${JSON.stringify(step.qdrant.afterRestart.memory)} MB`,
        );
      }
      report.steps.push(step);
      rows.push(...stepRows(step, count, empty, sizes));
    }
    rows.push(...memoryRows(report.steps, log));
    if (process.env.BENCH_SEARCH_WORKERS !== '0') {
      report.workers = await workers(servers, sizes[sizes.length - 1], log);
      rows.push(...workersRows(report.workers, sizes[sizes.length - 1]));
    }
  } finally {
    for (const thing of owned.reverse())
      await thing.close().catch((e) => log(`search scale: ${e.message}`));
  }
  writeFileSync(
    join(root, 'bench/results/search-scale-latest.json'),
    JSON.stringify({ ...report, rows }, null, 2),
  );
  return rows;
}

/** Writes `count` documents after the first `from`; waits for them indexed and the model learnt. */
async function grow(server, corpus, from, count, log) {
  const loadBefore = load1();
  const started = performance.now();
  const writes = await server.load({
    concurrency: WRITE_CONCURRENCY,
    requests: count,
    warmup: 0,
    request: (i) => writeRequest(corpus, from + i, HEADERS),
  });
  const wroteMs = performance.now() - started;
  await server.indexed();
  const indexedMs = performance.now() - started;
  const loadIndexed = load1();
  await server.learnt();
  const learntMs = performance.now() - started;
  // And the anchor fields, which follow the pipeline: searches are measured on a quiet server.
  await server.anchorsRead();
  const anchorsMs = performance.now() - started;
  const rss = await server.residentMegabytes();
  const peak = server.peakMegabytes();
  const rate = round((count * 1000) / indexedMs);
  log(
    `search scale (${server.store}): ${count} documents written in ${round(wroteMs / 1000)} s (${round((count * 1000) / wroteMs)}/s, ${writes.errors} errors), all indexed after ${round(indexedMs / 1000)} s (pipeline ${rate} documents/s), the semantic model after ${round(learntMs / 1000)} s, the anchor fields after ${round(anchorsMs / 1000)} s; peak RSS ${peak} MB, now ${rss} MB; load ${loadBefore} → ${loadIndexed}`,
  );
  return {
    writes,
    wroteMs: Math.round(wroteMs),
    indexedMs: Math.round(indexedMs),
    learntMs: Math.round(learntMs),
    rate,
    rss,
    peak,
    load: [loadBefore, loadIndexed],
  };
}

/** Qdrant once its optimisers are done with the writes: memory and disk, per 10 000 documents. */
async function qdrantAfter(qdrant, server, size, log) {
  const optimiseMs = await qdrant.optimised(server.collection);
  const info = await qdrant.collection(server.collection);
  const memory = qdrant.residentMb();
  const diskMb = qdrant.diskMb();
  const per10k = (mb) => round((mb * 10_000) / size);
  log(
    `search scale: Qdrant at ${size} documents (${info.points_count} points, ${info.segments_count} segments), optimised ${optimiseMs} ms after the pipeline's end: RSS ${memory.rss} MB (anonymous ${memory.anon}, files ${memory.file}), disk ${diskMb} MB; per 10 000 documents ${per10k(memory.rss)} MB RSS, ${per10k(diskMb)} MB disk`,
  );
  return { optimiseMs, points: info.points_count, segments: info.segments_count, memory, diskMb };
}

/** Every query of the retrieval set one at a time, in each mode (after as many unmeasured). */
async function searchTimes(server, queries) {
  const times = {};
  for (const mode of MODES) {
    times[mode] = await server.load({
      concurrency: 1,
      requests: queries.length,
      warmup: queries.length,
      request: (i) => ({
        path: `/search?${searchParams(queries[i % queries.length], mode)}`,
        headers: HEADERS,
      }),
    });
  }
  return times;
}

/** The rows of one size: writes, searches, restarts, Qdrant against local, Qdrant's sizing. */
function stepRows(step, count, empty, sizes) {
  const { size, stores } = step;
  const last = size === sizes[sizes.length - 1];
  const rows = [];
  for (const [store, s] of Object.entries(stores)) {
    rows.push({
      scenario: `search scale (${store}): write ${count} documents through REST (to ${size})`,
      ...s.writes,
      compared: `pipeline ${s.rate} documents/s; RSS ${s.rss} MB, peak ${s.peak} MB; load ${s.load.join(' → ')}`,
    });
    for (const mode of MODES) {
      rows.push({
        scenario: `search scale (${store}): ${mode} at ${size} documents`,
        ...s.searches[mode],
        ...(mode === 'hybrid' && last ? { target_p95_ms: TARGET_P95_MS } : {}),
        compared:
          store === 'qdrant' && stores.local
            ? `p95 ${round(s.searches[mode].p95 / stores.local.searches[mode].p95)}× the local index's`
            : '',
      });
    }
    const ready = TARGET_READY_MS[store];
    const overEmpty = s.restart.rss - empty[store].rss;
    rows.push({
      scenario: `search scale (${store}): restart to ready at ${size} documents`,
      ready_ms: s.restart.readyMs,
      stop_ms: s.restart.stopMs,
      target_ready_ms: ready,
      rss_mb: s.restart.rss,
      rss_empty_mb: empty[store].rss,
      cpu_ms: s.restart.cpuMs,
      phases_ms: s.restart.phases,
      compared: `stopped in ${round(s.restart.stopMs / 1000)} s, ready in ${round(s.restart.readyMs / 1000)} s, ${round(s.restart.cpuMs / 1000)} s of CPU (target ${store === 'qdrant' ? '<' : '≤'} ${ready / 1000} s): ${s.restart.readyMs <= ready ? 'PASS' : 'MISS'}; RSS after restart ${s.restart.rss} MB, ${overEmpty} MB over an empty server's${store === 'qdrant' ? ` (target ≤ ${TARGET_EMPTY_MB}): ${overEmpty <= TARGET_EMPTY_MB ? 'PASS' : 'MISS'}` : ''}`,
    });
  }
  if (stores.local && stores.qdrant) {
    const ratio = round(stores.qdrant.rate / stores.local.rate);
    rows.push({
      scenario: `search scale: pipeline into Qdrant against the local index, ${count} documents (to ${size})`,
      ratio,
      target_ratio: TARGET_PIPELINE_RATIO,
      compared: `${stores.qdrant.rate} against ${stores.local.rate} documents/s = ${ratio} × (target ≥ ${TARGET_PIPELINE_RATIO}): ${ratio >= TARGET_PIPELINE_RATIO ? 'PASS' : 'MISS'}`,
    });
  }
  if (step.qdrant) {
    const q = step.qdrant;
    const per10k = (mb) => round((mb * 10_000) / size);
    rows.push({
      scenario: `search scale: Qdrant itself at ${size} documents`,
      qdrant_rss_mb: q.memory.rss,
      qdrant_anon_mb: q.memory.anon,
      qdrant_disk_mb: q.diskMb,
      qdrant_rss_after_restart_mb: q.afterRestart.memory.rss,
      points: q.points,
      compared: `RSS ${q.memory.rss} MB (anonymous ${q.memory.anon}), ${q.afterRestart.memory.rss} MB after its restart; disk ${q.diskMb} MB; per 10 000 documents ${per10k(q.memory.rss)} MB RSS, ${per10k(q.afterRestart.memory.rss)} after a restart, ${per10k(q.diskMb)} MB disk; optimised ${round(q.optimiseMs / 1000)} s after the pipeline`,
    });
  }
  return rows;
}

/**
 * MB per 10 000 documents between consecutive sizes: the local server's at the peak, once
 * indexed and after a restart (target ≤ 60); Qdrant's resident memory and disk.
 */
function memoryRows(steps, log) {
  const rows = [];
  for (let k = 1; k < steps.length; k++) {
    const [a, b] = [steps[k - 1], steps[k]];
    const per = (x, y) => round(((y - x) * 10_000) / (b.size - a.size));
    const local = [a.stores.local, b.stores.local];
    if (local[0] && local[1]) {
      const slopes = {
        peak: per(local[0].peak, local[1].peak),
        indexed: per(local[0].rss, local[1].rss),
        restarted: per(local[0].restart.rss, local[1].restart.rss),
      };
      const pass = Object.values(slopes).every((mb) => mb <= TARGET_MB_PER_10K);
      log(
        `search scale (local): memory ${a.size} → ${b.size} documents, MB per 10 000: peak ${slopes.peak}, indexed ${slopes.indexed}, after a restart ${slopes.restarted} (target ≤ ${TARGET_MB_PER_10K}): ${pass ? 'PASS' : 'MISS'}`,
      );
      rows.push({
        scenario: `search scale (local): memory from ${a.size} to ${b.size} documents`,
        mb_per_10k_peak: slopes.peak,
        mb_per_10k_indexed: slopes.indexed,
        mb_per_10k_restarted: slopes.restarted,
        target_mb_per_10k: TARGET_MB_PER_10K,
        compared: `peak ${local[0].peak} → ${local[1].peak} MB, indexed ${local[0].rss} → ${local[1].rss} MB, after a restart ${local[0].restart.rss} → ${local[1].restart.rss} MB: ${pass ? 'PASS' : 'MISS'}`,
      });
    }
    if (a.qdrant && b.qdrant) {
      const rss = per(a.qdrant.memory.rss, b.qdrant.memory.rss);
      const restarted = per(a.qdrant.afterRestart.memory.rss, b.qdrant.afterRestart.memory.rss);
      // Anonymous memory is what Qdrant holds itself; the rest of its RSS is its files mapped.
      const anon = per(a.qdrant.memory.anon, b.qdrant.memory.anon);
      const anonRestarted = per(
        a.qdrant.afterRestart.memory.anon,
        b.qdrant.afterRestart.memory.anon,
      );
      const disk = per(a.qdrant.diskMb, b.qdrant.diskMb);
      rows.push({
        scenario: `search scale: Qdrant from ${a.size} to ${b.size} documents`,
        mb_per_10k_rss: rss,
        mb_per_10k_rss_restarted: restarted,
        mb_per_10k_anon: anon,
        mb_per_10k_anon_restarted: anonRestarted,
        mb_per_10k_disk: disk,
        compared: `MB per 10 000 documents: anonymous ${anon} (after a restart ${anonRestarted}), RSS ${rss} (after a restart ${restarted}), disk ${disk}`,
      });
    }
  }
  return rows;
}

/** Each store's process tree with one process and with four cluster workers, same database. */
async function workers(servers, size, log) {
  const measured = {};
  for (const [store, server] of Object.entries(servers)) {
    const one = await server.treeMegabytes(1, size);
    const many = await server.treeMegabytes(CLUSTER_WORKERS, size);
    measured[store] = { one, many };
    log(
      `search scale (${store}): at ${size} documents, proportional set size of the process tree: 1 process ${one.total} MB, ${CLUSTER_WORKERS} workers ${many.total} MB (${many.parts}); resident sizes summed: ${one.rss} and ${many.rss} MB`,
    );
  }
  return measured;
}

function workersRows(measured, size) {
  const rows = [];
  for (const [store, { one, many }] of Object.entries(measured)) {
    const ratio = round(many.total / one.total);
    rows.push({
      scenario: `search scale (${store}): memory of ${CLUSTER_WORKERS} workers against one at ${size} documents`,
      pss_one_mb: one.total,
      pss_workers_mb: many.total,
      rss_one_mb: one.rss,
      rss_workers_mb: many.rss,
      ratio,
      ...(store === 'local' ? { target_ratio: TARGET_WORKERS_RATIO } : {}),
      compared: `PSS ${one.total} → ${many.total} MB = ${ratio}× (${many.parts})${store === 'local' ? ` (target ≤ ${TARGET_WORKERS_RATIO}×): ${ratio <= TARGET_WORKERS_RATIO ? 'PASS' : 'MISS'}` : ''}; RSS summed ${round(many.rss / one.rss)}×`,
    });
  }
  if (measured.local && measured.qdrant) {
    const pod = measured.qdrant.many.total;
    const local = measured.local.one.total;
    rows.push({
      scenario: `search scale: a pod of ${CLUSTER_WORKERS} workers in qdrant mode against one local server at ${size} documents`,
      pss_qdrant_pod_mb: pod,
      pss_local_one_mb: local,
      compared: `PSS ${pod} against ${local} MB = ${round(pod / local)}× (target: less): ${pod < local ? 'PASS' : 'MISS'}`,
    });
  }
  return rows;
}

function searchParams(query, mode) {
  const params = new URLSearchParams({ query: query.query, limit: '10', mode });
  if (query.prefix) params.set('prefix', query.prefix);
  return params.toString();
}

function load1() {
  return round(loadavg()[0]);
}
