// Retrieval quality (docs/search.md): the graded benchmark of bench/retrieval/ (485 sections of
// the markdown documentation of permissively licensed packages in node_modules, 95 queries
// written by reading them) run against the bench server, in every search mode, beside a
// BM25 baseline (minisearch) computed in the same run over the same corpus. Prints the
// table per kind and mode and writes it to bench/results/retrieval-latest.json.
// `BENCH_DOCS=0 BENCH_ONLY=50 npm run bench` runs it alone, over the corpus alone.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runRetrieval } from '../retrieval/run-retrieval.mjs';

const results = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');

export default async function retrieval({ baseUrl, headers, log, documentCount }) {
  const outcome = await runRetrieval({
    baseUrl,
    headers,
    log: (message) => log(`retrieval: ${message}`),
    print: (line) => process.stderr.write(`${line}\n`),
  });
  writeFileSync(
    join(results, 'retrieval-latest.json'),
    JSON.stringify(
      { date: new Date().toISOString(), otherDocuments: documentCount, ...outcome },
      null,
      2,
    ),
  );
  const overall = (mode) => outcome.table.find((r) => r.mode === mode && r.kind === 'overall');
  const hybrid = overall('hybrid');
  const bm25 = overall('bm25');
  if (hybrid && bm25) {
    log(
      `retrieval: hybrid nDCG@10 ${hybrid.ndcg10.toFixed(3)} = ${(hybrid.ndcg10 / bm25.ndcg10).toFixed(2)} × BM25 (${bm25.ndcg10.toFixed(3)}); target ≥ 1.1 ×`,
    );
  }
  // Quality, not latency: nothing for the latency table.
  return [];
}
