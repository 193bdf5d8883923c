// What to size Qdrant for with an embedding model (docs/performance.md, "Going past one pod"):
// bge-small-en-v1.5 (384 dimensions) got as a user gets it (tools/models/obtain-test-models.sh,
// `agent-data models add`), a server with the lexical side in Qdrant (LEXICAL_STORE=qdrant) on
// a PostgreSQL of its own and a Qdrant node started here (bench/qdrant.mjs), grown through REST
// with the search-scale scenario's documents of 2–6 KB to each size of BENCH_QDRANT_MODEL_SIZES
// (5 000, then 10 000: the model embeds a few passages a second on two busy cores, some six a
// document, so 10 000 documents take hours; `BENCH_QDRANT_MODEL_SIZES=100,300` takes minutes).
// At each size, once the pipeline has embedded every document and Qdrant's optimisers are
// done: Qdrant's resident memory and its storage folder on disk, per 10 000 documents, also
// after a restart of the node; the passages and the pipeline's rate.
// 70-search-scale measures the same with the default embedder (768-dimension hashed vectors).
//
// `BENCH_DOCS=0 BENCH_ONLY=72 npm run bench` runs it alone. Without the model's jar (no mvn) or
// without a Qdrant binary it says so in one line and measures nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { round } from '../lib.mjs';
import { BGE, addModel, obtainJars } from '../models/model-kit.mjs';
import { qdrantBinary, startQdrant } from '../qdrant.mjs';
import { buildCorpus } from '../retrieval/corpus.mjs';
import { scaleDocument } from '../search-scale/documents.mjs';
import { HEADERS, scaleServer } from '../search-scale/scale-server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export default async function qdrantSizing({ log }) {
  const say = (message) => log(`qdrant sizing: ${message}`);
  const binary = qdrantBinary();
  if (!binary.path) {
    say(`skipped: ${binary.missing}`);
    return [{ scenario: 'qdrant sizing', compared: `skipped: ${binary.missing}` }];
  }
  const jars = obtainJars();
  if (!jars.bge) {
    const why = `no ${BGE.jar}: ${jars.said || 'tools/models/obtain-test-models.sh got none'}`;
    say(`skipped: ${why}`);
    return [{ scenario: 'qdrant sizing', compared: `skipped: ${why}` }];
  }
  const sizes = (process.env.BENCH_QDRANT_MODEL_SIZES ?? '5000,10000')
    .split(',')
    .map(Number)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  const models = mkdtempSync(join(tmpdir(), 'agent-data-bench-sizing-models-'));
  const corpus = await buildCorpus(root, { warn: say });
  const rows = [];
  const steps = [];
  let qdrant;
  let server;
  try {
    say(`agent-data models add ${BGE.name}: ${addModel(BGE.name, jars.bge, models).said}`);
    qdrant = await startQdrant();
    server = await scaleServer({ store: 'qdrant', qdrant, log, env: { MODELS_DIR: models } });
    let written = 0;
    for (const size of sizes) {
      const load = [round(loadavg()[0])];
      const started = performance.now();
      const writes = await server.load({
        concurrency: 8,
        requests: size - written,
        warmup: 0,
        request: (i) => ({
          method: 'POST',
          path: '/documents',
          headers: { ...HEADERS, 'Content-Type': 'application/json', Prefer: 'return=minimal' },
          body: scaleDocument(corpus, written + i),
        }),
      });
      await server.indexed();
      const indexedMs = performance.now() - started;
      load.push(round(loadavg()[0]));
      const optimiseMs = await qdrant.optimised(server.collection);
      await server.searches(40);
      const info = await qdrant.collection(server.collection);
      const step = {
        size,
        documentsPerSecond: round(((size - written) * 1000) / indexedMs),
        indexedS: round(indexedMs / 1000),
        optimiseMs,
        points: info.points_count,
        passages: info.points_count - size,
        memory: qdrant.residentMb(),
        diskMb: qdrant.diskMb(),
        writeErrors: writes.errors,
        load,
      };
      const restartMs = await qdrant.restart();
      await server.searches(40);
      step.afterRestart = { restartMs, memory: qdrant.residentMb() };
      written = size;
      steps.push(step);
      const per10k = (mb) => round((mb * 10_000) / size);
      const line = `${BGE.name} at ${size} documents (${step.passages} passages): Qdrant RSS ${step.memory.rss} MB (anonymous ${step.memory.anon}), ${step.afterRestart.memory.rss} MB after its restart, disk ${step.diskMb} MB; per 10 000 documents ${per10k(step.memory.rss)} MB RSS (${per10k(step.afterRestart.memory.rss)} after a restart), ${per10k(step.diskMb)} MB disk; pipeline ${step.documentsPerSecond} documents/s; optimised ${round(optimiseMs / 1000)} s after it; load ${load.join(' → ')}`;
      say(line);
      rows.push({
        scenario: `qdrant sizing (${BGE.name}): at ${size} documents`,
        qdrant_rss_mb: step.memory.rss,
        qdrant_anon_mb: step.memory.anon,
        qdrant_rss_after_restart_mb: step.afterRestart.memory.rss,
        qdrant_disk_mb: step.diskMb,
        passages: step.passages,
        documents_per_s: step.documentsPerSecond,
        compared: line,
      });
    }
    for (let k = 1; k < steps.length; k++) {
      const [a, b] = [steps[k - 1], steps[k]];
      const per = (x, y) => round(((y - x) * 10_000) / (b.size - a.size));
      // Anonymous memory is what Qdrant holds; the rest of its RSS is its files mapped in
      // (page cache the kernel takes back under pressure), which a restart resets.
      const compared = `MB per 10 000 documents from ${a.size} to ${b.size}: anonymous ${per(a.memory.anon, b.memory.anon)} (after a restart ${per(a.afterRestart.memory.anon, b.afterRestart.memory.anon)}), RSS ${per(a.memory.rss, b.memory.rss)} (after a restart ${per(a.afterRestart.memory.rss, b.afterRestart.memory.rss)}), disk ${per(a.diskMb, b.diskMb)}`;
      say(compared);
      rows.push({ scenario: `qdrant sizing (${BGE.name}): ${a.size} → ${b.size}`, compared });
    }
  } finally {
    await server?.close();
    await qdrant?.stop();
    rmSync(models, { recursive: true, force: true });
  }
  writeFileSync(
    join(root, 'bench/results/qdrant-sizing-latest.json'),
    JSON.stringify({ date: new Date().toISOString(), model: BGE.name, steps }, null, 2),
  );
  return rows;
}
