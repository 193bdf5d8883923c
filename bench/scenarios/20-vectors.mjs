// Vector pipeline (docs/search.md): local-embedder throughput, write-to-ready lag under a steady
// 50 writes/s, and /search latency at concurrency 10 over every seeded document (hybrid,
// then each side alone).
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { round, seededId, semanticModelLearnt, summarize } from '../lib.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (file) => pathToFileURL(join(root, 'dist/src/vectors', file)).href;

const WRITES_PER_SECOND = 50;
const LAG_WRITES = 1000; // 20 s of steady writes
const POLL_MS = 5;
const SEARCH_CONCURRENCY = 10;
const SEARCH_REQUESTS = 2000;
const VOCABULARY =
  `agent vector index query latency postgres search embedding document markdown chunk
  token model cache replica cluster backup restore revision snapshot audit trigger listener worker
  queue lease retry backoff metric gauge alert deploy helm chart ingress service secret config
  knowledge report phase plan roadmap design review incident outage recovery capacity throughput`
    .split(/\s+/)
    .filter(Boolean);

export default async function vectors(ctx) {
  const rows = [];
  rows.push(...(await embedderThroughput(ctx)));
  rows.push(...(await writeToReadyLag(ctx)));
  await drained(ctx);
  rows.push(...(await searchLatency(ctx)));
  return rows;
}

/** Chunks and embeds seeded bodies in this process with the built local embedder. */
async function embedderThroughput({ query, log }) {
  const { LocalEmbedder } = await import(dist('embedders/local.embedder.js'));
  const { chunkMarkdown } = await import(dist('work/markdown-chunker.js'));
  const { warmTokenizer } = await import(dist('embedders/tokenizer.js'));
  warmTokenizer();
  const bodies = await query(
    `SELECT title, body FROM kb_documents WHERE document_id LIKE 'bench/%' ORDER BY document_id LIMIT 2000`,
  );

  const chunkTimes = [];
  const texts = [];
  const chunkStart = performance.now();
  for (const { title, body } of bodies) {
    const t0 = performance.now();
    texts.push(...chunkMarkdown(body, title).map((c) => c.text));
    chunkTimes.push(performance.now() - t0);
  }
  const chunkSeconds = (performance.now() - chunkStart) / 1000;

  const embedder = new LocalEmbedder();
  for (const text of texts.slice(0, 500)) embedder.embedOne(text); // JIT warm-up
  const times = [];
  const started = performance.now();
  while (performance.now() - started < 3000 || times.length < 20_000) {
    for (const text of texts) {
      const t0 = performance.now();
      embedder.embedOne(text);
      times.push(performance.now() - t0);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const perSecond = round(times.length / seconds);
  log(`local embedder: ${perSecond} chunks/s (${embedder.dimensions} dimensions, target ≥ 5000)`);
  return [
    {
      scenario: 'local embedder (chunks/s)',
      ...summarize(times),
      rps: perSecond,
      errors: 0,
      note: `rps = chunks embedded per second on one core, target ≥ 5000; ${embedder.dimensions} dimensions, ~${Math.round(
        texts.reduce((n, t) => n + t.length, 0) / texts.length,
      )} chars per chunk`,
    },
    {
      scenario: 'chunker (documents/s)',
      ...summarize(chunkTimes),
      rps: round(bodies.length / chunkSeconds),
      errors: 0,
      note: 'markdown chunking with cl100k token counts, ~200-word documents',
    },
  ];
}

/**
 * Open-loop writes at a fixed rate (half creates, half updates of seeded documents); each
 * write's lag runs from its acknowledgement to the moment the database shows that revision
 * `ready` (polled every POLL_MS, so figures are within that of the truth).
 */
async function writeToReadyLag({ baseUrl, headers, query, documentCount, log }) {
  const pending = new Map(); // id -> { revision, ackedAt }
  const lags = [];
  const writeTimes = [];
  let errors = 0;
  let polling = true;

  const poller = (async () => {
    while (polling || pending.size > 0) {
      const ids = [...pending.keys()];
      if (ids.length > 0) {
        const rows = await query(
          `SELECT document_id, vector_revision FROM kb_documents
            WHERE document_id = ANY($1::text[]) AND vector_status = 'ready'`,
          [ids],
        );
        const now = performance.now();
        for (const row of rows) {
          const write = pending.get(row.document_id);
          if (write && row.vector_revision >= write.revision) {
            lags.push(now - write.ackedAt);
            pending.delete(row.document_id);
          }
        }
      }
      await sleep(POLL_MS);
    }
  })();

  const interval = 1000 / WRITES_PER_SECOND;
  const start = performance.now();
  const writes = [];
  for (let i = 0; i < LAG_WRITES; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    writes.push(
      (async () => {
        const update = i % 2 === 1;
        const id = update
          ? seededId((i * 7919 + 13) % documentCount)
          : `bench-lag/w-${String(i).padStart(5, '0')}.md`;
        const t0 = performance.now();
        const response = await fetch(`${baseUrl}/documents${update ? `/${id}` : ''}`, {
          method: update ? 'PUT' : 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify(
            update
              ? { body: `# Rewritten ${i}\n\nThe lag bench rewrote this note: ${words(i, 60)}.` }
              : { document_id: id, body: `# Lag ${i}\n\n${words(i, 120)}.`, tags: ['lag'] },
          ),
        });
        const ackedAt = performance.now();
        writeTimes.push(ackedAt - t0);
        if (!response.ok) {
          errors++;
          return;
        }
        const document = await response.json();
        pending.set(id, { revision: document.revision, ackedAt });
      })(),
    );
  }
  await Promise.all(writes);
  const elapsed = (performance.now() - start) / 1000;
  polling = false;
  const deadline = performance.now() + 60_000;
  while (pending.size > 0 && performance.now() < deadline) await sleep(50);
  errors += pending.size;
  pending.clear();
  await poller;
  log(
    `write-to-ready lag measured on ${lags.length} writes at ${round(LAG_WRITES / elapsed)} writes/s`,
  );
  return [
    {
      scenario: `vector lag at ${WRITES_PER_SECOND} writes/s (write ack → ready)`,
      ...summarize(lags),
      rps: round(LAG_WRITES / elapsed),
      errors,
      target_p95_ms: 1000,
      note: `open loop, half creates, half updates of seeded documents; readiness polled every ${POLL_MS} ms`,
    },
    {
      scenario: `writes during the lag run (${WRITES_PER_SECOND}/s)`,
      ...summarize(writeTimes),
      rps: round(LAG_WRITES / elapsed),
      errors,
      note: 'REST create/update latency while the worker embeds',
    },
  ];
}

async function searchLatency({ load, baseUrl, headers, query, documentCount, log }) {
  await semanticModelLearnt(baseUrl, headers);
  const [{ n }] = await query(
    `SELECT count(*)::int AS n FROM kb_documents WHERE vector_status = 'ready'`,
  );
  log(`searching over ${n} ready documents`);
  const folders = Math.max(1, Math.floor(documentCount / 100));
  const search = (params) => `/search?${new URLSearchParams(params)}`;
  const rows = [];
  const plain = await load({
    concurrency: SEARCH_CONCURRENCY,
    requests: SEARCH_REQUESTS,
    request: (i) => ({ path: search({ query: words(i, 3), limit: '10' }), headers }),
  });
  rows.push({
    scenario: `search (${n} documents, concurrency ${SEARCH_CONCURRENCY})`,
    ...plain,
    target_p95_ms: 50,
    note: 'GET /search (hybrid), 3-word queries, limit 10, PostgreSQL store, local embedder',
  });
  for (const mode of ['lexical', 'vector']) {
    const alone = await load({
      concurrency: SEARCH_CONCURRENCY,
      requests: SEARCH_REQUESTS / 2,
      request: (i) => ({ path: search({ query: words(i, 3), limit: '10', mode }), headers }),
    });
    rows.push({
      scenario: `search, mode ${mode}`,
      ...alone,
      target_p95_ms: 50,
      note: `GET /search?mode=${mode}, the same queries`,
    });
  }
  const filtered = await load({
    concurrency: SEARCH_CONCURRENCY,
    requests: SEARCH_REQUESTS,
    request: (i) => ({
      path: search({
        query: words(i, 3),
        prefix: `bench/d${String(i % folders).padStart(3, '0')}`,
        tags: `group-${i % 10}`,
      }),
      headers,
    }),
  });
  rows.push({
    scenario: 'search with prefix and tag filters',
    ...filtered,
    target_p95_ms: 50,
    note: 'one folder of 100 documents and one tag',
  });
  return rows;
}

/** Waits until nothing is pending, so search runs over every document. */
async function drained({ query, log }) {
  const started = performance.now();
  for (;;) {
    const [{ n }] = await query(
      `SELECT count(*)::int AS n FROM kb_documents WHERE vector_status = 'pending'`,
    );
    if (n === 0) break;
    if (performance.now() - started > 600_000) throw new Error(`${n} documents still pending`);
    await sleep(200);
  }
  log(`queue drained in ${round(performance.now() - started)} ms`);
}

function words(seed, count) {
  return Array.from(
    { length: count },
    (_, k) => VOCABULARY[(seed * 31 + k * 17 + k * k) % VOCABULARY.length],
  ).join(' ');
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
