// Retrieval quality (docs/search.md): the graded benchmark of bench/retrieval/ (485 sections of
// the markdown documentation of permissively licensed packages in node_modules, the queries
// of queries.json written by reading them) run against a server and PostgreSQL of its own
// holding the corpus alone (the bench server's seeded documents would change every
// statistic of the ranking, and the semantic model would be learnt from them), in every
// search mode, beside the baselines of maintained search libraries (MiniSearch, lunr, Orama)
// computed in the same run over the same corpus. Prints the table per kind and mode, each
// mode's ratio to the best baseline of every kind, and writes it all to
// bench/results/retrieval-latest.json.
// `BENCH_DOCS=0 BENCH_ONLY=50 npm run bench` runs it alone.
// With BENCH_SECOND_CORPUS=1 the second corpus (bench/retrieval/second-corpus.mjs) and its
// held-back queries are measured too, on a PostgreSQL and a server of their own holding that
// corpus alone, beside the baselines over it alone: rows `second corpus: <mode>`.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../lib.mjs';
import { OwnPostgres } from '../own-postgres.mjs';
import { SECOND_MODE_PREFIX, runRetrieval } from '../retrieval/run-retrieval.mjs';

const results = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');
const KEY = 'retrieval-key-0123456789abcdef';

export default async function retrieval({ log }) {
  const second = process.env.BENCH_SECOND_CORPUS === '1';
  const clusters = [];
  const servers = [];
  let outcome;
  try {
    const own = async (what) => {
      const cluster = await OwnPostgres.create();
      clusters.push(cluster);
      const server = await startServer({
        databaseUrl: cluster.url,
        env: { API_KEYS: `retrieval:${KEY}:admin`, RATE_LIMIT_ADMIN_WRITES: 'off' },
      });
      servers.push(server);
      log(
        `retrieval: ${what}own PostgreSQL on port ${cluster.port}, own server on ${server.baseUrl}`,
      );
      return server;
    };
    const server = await own('');
    const secondServer = second ? await own('second corpus: ') : undefined;
    outcome = await runRetrieval({
      baseUrl: server.baseUrl,
      headers: { 'X-API-Key': KEY },
      log: (message) => log(`retrieval: ${message}`),
      print: (line) => process.stderr.write(`${line}\n`),
      secondCorpus: secondServer
        ? { baseUrl: secondServer.baseUrl, headers: { 'X-API-Key': KEY } }
        : false,
    });
  } finally {
    for (const server of servers) await server.stop();
    for (const cluster of clusters) await cluster.destroy();
  }
  writeFileSync(
    join(results, 'retrieval-latest.json'),
    JSON.stringify({ date: new Date().toISOString(), ...outcome }, null, 2),
  );
  for (const line of againstBaselines(outcome.table)) log(`retrieval: ${line}`);
  if (second)
    for (const line of againstBaselines(outcome.table, SECOND_MODE_PREFIX))
      log(`retrieval: ${line}`);
  // Quality, not latency: nothing for the latency table.
  return [];
}

/**
 * Each server mode's nDCG@10 per kind as a ratio to the best baseline of that kind, among the
 * rows whose mode starts with `prefix` (the second corpus's: `second corpus: `).
 */
export function againstBaselines(table, prefix = '') {
  const baselines = new Set(
    ['minisearch', 'lunr', 'lunr (body only)', 'orama'].map((name) => `${prefix}${name}`),
  );
  const kinds = [...new Set(table.map((r) => r.kind))];
  const best = new Map(
    kinds.map((kind) => [
      kind,
      table
        .filter((r) => r.kind === kind && baselines.has(r.mode))
        .reduce((a, b) => (b.ndcg10 > (a?.ndcg10 ?? -1) ? b : a), undefined),
    ]),
  );
  return ['hybrid', 'lexical', 'vector']
    .map((mode) => `${prefix}${mode}`)
    .flatMap((mode) => {
      const rows = table.filter((r) => r.mode === mode);
      if (rows.length === 0) return [];
      const ratios = rows.map((r) => {
        const b = best.get(r.kind);
        return `${r.kind} ${r.ndcg10.toFixed(3)} = ${(r.ndcg10 / b.ndcg10).toFixed(2)} × ${b.mode} (${b.ndcg10.toFixed(3)})`;
      });
      return [`${mode} nDCG@10: ${ratios.join('; ')}`];
    });
}
