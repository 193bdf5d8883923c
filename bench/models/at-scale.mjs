// Search with an embedding model at the largest size it embeds in a given time, for the
// embedding-model scenario (scenarios/55-models.mjs): a server with the model grown to N
// documents (the retrieval corpus's sections replicated, as 70-search-scale does), a document
// written while the pipeline is busy and searched lexically, then every query of the set one
// at a time and at concurrency 10, with the query-embedding histogram of each.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, round, until } from '../lib.mjs';
import { buildCorpus } from '../retrieval/corpus.mjs';
import { QUERIES_FILE } from '../retrieval/run-retrieval.mjs';
import { scaleDocument, writeRequest } from '../search-scale/documents.mjs';
import {
  BGE,
  QUERY_HISTOGRAM,
  Watch,
  histogram,
  histogramSince,
  load1,
  loadedEmbedder,
  passagesOf,
  quantileMs,
  residentMb,
  sql,
} from './model-kit.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Hybrid search's p95 target at the largest size. */
export const TARGET_P95_MS = 50;

/** Documents written at a time: the server grows by steps while they fit in the time given. */
const STEP = 500;

/**
 * Grows a server with the model by steps of {@link STEP} documents (the corpus's sections
 * replicated, as 70-search-scale does), each embedded before the next is written, while the
 * next step still fits in BENCH_MODEL_EMBED_SECONDS (600) of embedding at the rate measured so
 * far (BENCH_MODEL_DOCS: that many documents instead); during the first step writes a document
 * and searches it lexically; then measures search one query at a time and at concurrency 10.
 */
export async function atScale({ own, say, models, rate, rows, headers }) {
  const budget = Number(process.env.BENCH_MODEL_EMBED_SECONDS ?? 600);
  const fixed = process.env.BENCH_MODEL_DOCS ? Number(process.env.BENCH_MODEL_DOCS) : undefined;
  const corpus = await buildCorpus(root, { warn: say });
  const sample = Array.from({ length: 300 }, (_, n) => scaleDocument(corpus, n));
  const perDocument = (await passagesOf(sample, BGE)).length / sample.length;
  say(
    `scale: ${round(perDocument)} passages a document; at the retrieval corpus's ${rate.passagesPerSecond} passages/s, ${Math.round((budget * rate.passagesPerSecond) / perDocument)} documents would take ${budget} s`,
  );
  const { cluster, server } = await own('scale: ', { MODELS_DIR: models });
  await loadedEmbedder(server.baseUrl, headers);
  const memory = { afterStartMb: residentMb(server.child.pid) };
  const watch = new Watch(server, headers, 2000);
  const run = (options) => load({ baseUrl: server.baseUrl, ...options });
  let size = 0;
  let embeddedS = 0;
  let writes;
  let lexicalProbe;
  let lastLog = 0;
  for (;;) {
    const count = fixed === undefined ? STEP : Math.min(STEP, fixed - size);
    const started = Date.now();
    const wrote = await run({
      concurrency: 8,
      requests: count,
      warmup: 0,
      request: (i) => writeRequest(corpus, size + i, headers),
    });
    writes ??= wrote;
    size += count;
    lexicalProbe ??= probeLexical(server, cluster, headers, say);
    await until(
      async () => {
        const s = await watch.sample();
        if (Date.now() - lastLog > 30_000) {
          lastLog = Date.now();
          say(`scale: ${s.ready} of ${size + 1} ready, RSS ${s.rssMb} MB (load ${load1()})`);
        }
        return s.pending === 0 && s.leased === 0;
      },
      60 * 60_000,
      { what: 'the pipeline to embed every document', everyMs: 2000 },
    );
    embeddedS += (Date.now() - started) / 1000;
    const next = (embeddedS / size) * STEP;
    const more = fixed === undefined ? embeddedS + next <= budget && size < 50_000 : size < fixed;
    say(
      `scale: ${size} documents embedded in ${round(embeddedS)} s${more ? '' : '; no more steps'}`,
    );
    if (!more) break;
  }
  const probe = await lexicalProbe;
  watch.stop();
  memory.endOfEmbeddingMb = residentMb(server.child.pid);
  memory.peakWhileEmbeddingMb = watch.peakMb();
  const passages = Number((await sql(cluster, 'SELECT count(*) AS n FROM kb_chunk_vectors'))[0].n);
  const pipeline = {
    documents: size,
    passages,
    seconds: round(embeddedS),
    documentsPerSecond: round(size / embeddedS),
    passagesPerSecond: round(passages / embeddedS),
  };
  say(
    `scale: ${size} documents, every one ready after ${pipeline.seconds} s of embedding: ${pipeline.documentsPerSecond} documents/s, ${pipeline.passagesPerSecond} passages/s; RSS ${memory.endOfEmbeddingMb} MB (peak ${memory.peakWhileEmbeddingMb})`,
  );
  rows.push({
    scenario: `models: write ${writes.requests} documents through REST (${BGE.name} server, the first step)`,
    ...writes,
    compared: `pipeline ${pipeline.documentsPerSecond} documents/s, ${pipeline.passagesPerSecond} passages/s; RSS ${memory.endOfEmbeddingMb} MB`,
  });
  const queries = JSON.parse(readFileSync(QUERIES_FILE, 'utf8'));
  const searches = {};
  const search = async (mode, concurrency) => {
    const before = await histogram(server.baseUrl, headers, QUERY_HISTOGRAM, 'onnx');
    const result = await run({
      concurrency,
      requests: queries.length * (concurrency === 1 ? 1 : 2),
      warmup: concurrency === 1 ? 40 : 100,
      request: (i) => ({
        path: `/search?${searchParams(queries[i % queries.length], mode)}`,
        headers: headers,
      }),
    });
    const since = histogramSince(
      await histogram(server.baseUrl, headers, QUERY_HISTOGRAM, 'onnx'),
      before,
    );
    const embedding = { p50: quantileMs(since, 0.5), p95: quantileMs(since, 0.95) };
    const name = `${mode}, concurrency ${concurrency}`;
    searches[name] = { ...result, queryEmbedding: embedding };
    rows.push({
      scenario: `models: ${mode} at ${size} documents (${BGE.name}), concurrency ${concurrency}`,
      ...result,
      ...(mode === 'hybrid' ? { target_p95_ms: TARGET_P95_MS } : {}),
      compared:
        mode === 'lexical'
          ? `load ${load1()}`
          : `query embedding p50 ${embedding.p50} ms, p95 ${embedding.p95} ms`,
    });
    say(
      `scale: ${name}: p50 ${result.p50} ms, p95 ${result.p95} ms, ${result.rps} req/s${mode === 'lexical' ? '' : `; query embedding p50 ${embedding.p50}, p95 ${embedding.p95} ms`}`,
    );
  };
  for (const mode of ['hybrid', 'lexical', 'vector']) await search(mode, 1);
  await search('hybrid', 10);
  memory.afterSearchesMb = residentMb(server.child.pid);
  await server.stop();
  return {
    documents: size,
    budgetSeconds: budget,
    perDocument: round(perDocument),
    pipeline,
    writes,
    probe,
    searches,
    memory,
  };
}

/**
 * A document written while the pipeline is busy, searched lexically every 100 ms until found:
 * how long after its write, and its vector status then.
 */
async function probeLexical(server, cluster, headers, say) {
  const word = `zqprobe${Date.now().toString(36)}`;
  const id = 'models-probe/lexical.md';
  const written = Date.now();
  const response = await fetch(`${server.baseUrl}/documents`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify({ document_id: id, title: 'Probe', body: `# Probe\n\nThe word ${word}.` }),
  });
  if (!response.ok) throw new Error(`the probe was refused: ${response.status}`);
  const path = `/search?${new URLSearchParams({ query: word, mode: 'lexical', limit: '1' })}`;
  for (const deadline = written + 60 * 60_000; Date.now() < deadline;) {
    const answer = await (await fetch(`${server.baseUrl}${path}`, { headers: headers })).json();
    if (answer.results?.[0]?.document_id === id) {
      const foundMs = Date.now() - written;
      const status = (
        await sql(cluster, 'SELECT vector_status FROM kb_documents WHERE document_id = $1', [id])
      )[0].vector_status;
      say(
        `scale: a document written while the pipeline was busy was found lexically ${foundMs} ms after its write (its vectors: ${status})`,
      );
      return { foundMs, vectorStatus: status };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the probe document was never found lexically');
}

function searchParams(query, mode) {
  const params = new URLSearchParams({ query: query.query, limit: '10', mode });
  if (query.prefix) params.set('prefix', query.prefix);
  return params.toString();
}
