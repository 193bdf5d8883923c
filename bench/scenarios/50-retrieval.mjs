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
// corpus alone, beside the baselines over it alone: rows `second corpus: <mode>`. With
// BENCH_LINKED_CORPUS=1 the same for the linked corpus (bench/retrieval/linked-corpus.mjs,
// fastify's documentation, whose pages link to one another) and its queries: rows
// `linked corpus: <mode>`, by half too.
//
// The same is measured with the lexical side in Qdrant (LEXICAL_STORE=qdrant: servers of their
// own, each with a collection of its own on a Qdrant node started here, bench/qdrant.mjs), and
// compared with the local index's, kind by kind (bench/retrieval/store-comparison.mjs; target:
// every overall row within 0.01); written to bench/results/retrieval-qdrant-latest.json.
// BENCH_RETRIEVAL_STORES=local measures the local index alone; without a Qdrant binary the
// Qdrant part says so in one line and is skipped.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../lib.mjs';
import { OwnPostgres } from '../own-postgres.mjs';
import { qdrantBinary, qdrantMode, startQdrant } from '../qdrant.mjs';
import {
  LINKED_MODE_PREFIX,
  SECOND_MODE_PREFIX,
  runRetrieval,
} from '../retrieval/run-retrieval.mjs';
import { compareStores } from '../retrieval/store-comparison.mjs';

const results = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');
const KEY = 'retrieval-key-0123456789abcdef';

export default async function retrieval({ log }) {
  const second = process.env.BENCH_SECOND_CORPUS === '1';
  const linked = process.env.BENCH_LINKED_CORPUS === '1';
  const stores = (process.env.BENCH_RETRIEVAL_STORES ?? 'local,qdrant').split(',');
  const binary = qdrantBinary();
  if (stores.includes('qdrant') && !binary.path) {
    log(`retrieval: the Qdrant part is skipped: ${binary.missing}`);
    stores.splice(stores.indexOf('qdrant'), 1);
  }
  const outcomes = {};
  const owned = [];
  try {
    const qdrant = stores.includes('qdrant') ? await startQdrant() : undefined;
    if (qdrant) owned.push(() => qdrant.stop());
    for (const store of stores) {
      const own = async (what, collection) => {
        const cluster = await OwnPostgres.create();
        owned.push(() => cluster.destroy());
        const server = await startServer({
          databaseUrl: cluster.url,
          env: {
            API_KEYS: `retrieval:${KEY}:admin`,
            RATE_LIMIT_ADMIN_WRITES: 'off',
            ...(store === 'qdrant' ? qdrantMode(qdrant.url, collection) : {}),
          },
        });
        owned.push(() => server.stop());
        log(
          `retrieval (${store}): ${what}own PostgreSQL on port ${cluster.port}, own server on ${server.baseUrl}`,
        );
        return server;
      };
      const server = await own('', 'retrieval');
      const secondServer = second ? await own('second corpus: ', 'retrieval_second') : undefined;
      const linkedServer = linked ? await own('linked corpus: ', 'retrieval_linked') : undefined;
      outcomes[store] = await runRetrieval({
        baseUrl: server.baseUrl,
        headers: { 'X-API-Key': KEY },
        log: (message) => log(`retrieval (${store}): ${message}`),
        print: (line) => process.stderr.write(`${line}\n`),
        secondCorpus: secondServer
          ? { baseUrl: secondServer.baseUrl, headers: { 'X-API-Key': KEY } }
          : false,
        linkedCorpus: linkedServer
          ? { baseUrl: linkedServer.baseUrl, headers: { 'X-API-Key': KEY } }
          : false,
      });
      // Each store's servers stop before the next one's are measured.
      while (owned.length > (qdrant ? 1 : 0)) await owned.pop()();
    }
  } finally {
    while (owned.length > 0) await owned.pop()();
  }
  const write = (file, outcome) =>
    writeFileSync(
      join(results, file),
      JSON.stringify({ date: new Date().toISOString(), ...outcome }, null, 2),
    );
  for (const [store, outcome] of Object.entries(outcomes)) {
    write(store === 'local' ? 'retrieval-latest.json' : `retrieval-${store}-latest.json`, outcome);
    for (const line of againstBaselines(outcome.table)) log(`retrieval (${store}): ${line}`);
    if (second)
      for (const line of againstBaselines(outcome.table, SECOND_MODE_PREFIX))
        log(`retrieval (${store}): ${line}`);
    if (linked)
      for (const line of againstBaselines(outcome.table, LINKED_MODE_PREFIX))
        log(`retrieval (${store}): ${line}`);
  }
  if (outcomes.local && outcomes.qdrant) {
    const comparison = compareStores(outcomes.local, outcomes.qdrant, 'the latent-semantic model');
    for (const line of comparison.lines) log(`retrieval: ${line}`);
    write('retrieval-stores-latest.json', { label: 'LSA', rows: comparison.rows });
  }
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
