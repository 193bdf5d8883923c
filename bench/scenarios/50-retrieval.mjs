// Retrieval quality (docs/search.md): the graded benchmark of bench/retrieval/ (485 sections of
// the markdown documentation of permissively licensed packages in node_modules, the queries
// of queries.json written by reading them) run against the bench server, in every search
// mode, beside the baselines of maintained search libraries (MiniSearch, lunr, Orama)
// computed in the same run over the same corpus. Prints the table per kind and mode, each
// mode's ratio to the best baseline of every kind, and writes it all to
// bench/results/retrieval-latest.json.
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
  for (const line of againstBaselines(outcome.table)) log(`retrieval: ${line}`);
  // Quality, not latency: nothing for the latency table.
  return [];
}

/** Each server mode's nDCG@10 per kind as a ratio to the best baseline of that kind. */
export function againstBaselines(table) {
  const baselines = new Set(['minisearch', 'lunr', 'lunr (body only)', 'orama']);
  const kinds = [...new Set(table.map((r) => r.kind))];
  const best = new Map(
    kinds.map((kind) => [
      kind,
      table
        .filter((r) => r.kind === kind && baselines.has(r.mode))
        .reduce((a, b) => (b.ndcg10 > (a?.ndcg10 ?? -1) ? b : a), undefined),
    ]),
  );
  return ['hybrid', 'lexical', 'vector'].flatMap((mode) => {
    const rows = table.filter((r) => r.mode === mode);
    if (rows.length === 0) return [];
    const ratios = rows.map((r) => {
      const b = best.get(r.kind);
      return `${r.kind} ${r.ndcg10.toFixed(3)} = ${(r.ndcg10 / b.ndcg10).toFixed(2)} × ${b.mode} (${b.ndcg10.toFixed(3)})`;
    });
    return [`${mode} nDCG@10: ${ratios.join('; ')}`];
  });
}
