// npm run bench: builds (npm script), starts a throwaway embedded PostgreSQL and the real
// server on loopback, seeds BENCH_DOCS documents (default 30 000), waits for the vector
// pipeline to catch up, then runs every scenario in bench/scenarios/ in file-name order.
// Prints p50/p95/p97.5/p99 and requests/s per scenario and writes them as JSON under
// bench/results/.
import { getRandomPort } from 'get-port-please';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { emptyModelsDir, load, until } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const documentCount = Number(process.env.BENCH_DOCS ?? 30000);
const only = process.env.BENCH_ONLY; // optional substring filter on scenario file names
const apiKey = 'bench-key-0123456789abcdef';
const headers = { 'X-API-Key': apiKey };
const log = (message) => process.stderr.write(`[bench] ${message}\n`);

const { startEmbeddedPostgres } = await import(
  pathToFileURL(join(root, 'dist/src/database/embedded-postgres.js')).href
);

const dataDir = mkdtempSync(join(tmpdir(), 'agent-data-bench-'));
chmodSync(dataDir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its directory
const cluster = await startEmbeddedPostgres(dataDir, {
  info: log,
  warn: log,
  debug: () => undefined,
});
const pool = new pg.Pool({ connectionString: cluster.url, max: 4 });
const query = async (text, params) => (await pool.query(text, params)).rows;

const port = await getRandomPort('127.0.0.1');
const baseUrl = `http://127.0.0.1:${port}`;
// An empty MODELS_DIR: a model in the developer's ./.data/models would change what is measured.
const modelsDir = emptyModelsDir();
// BENCH_NODE_ARGS: extra node options for the server, e.g. `--cpu-prof --cpu-prof-dir=prof`
// to profile it under the scenarios' load (the profile is written when it stops).
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const server = spawn(process.execPath, [...nodeArgs, join(root, 'dist/src/main.js')], {
  env: {
    ...process.env,
    DATABASE_URL: cluster.url,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    API_KEYS: `bench:${apiKey}:admin,internal,readonly,gpt,gpt-full`,
    MODELS_DIR: modelsDir,
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
let results = [];
try {
  await until(async () => (await fetch(`${baseUrl}/health/live`)).ok, 60_000, {
    what: 'server start',
    everyMs: 200,
  });
  log(`server on ${baseUrl}; seeding ${documentCount} documents`);
  const seeded = Date.now();
  await seed(documentCount);
  log(`seeded in ${Date.now() - seeded} ms`);
  await drainVectorWork();
  // After a bulk load, as an operator would: otherwise autovacuum visits the new tables at
  // a moment of its choosing, in the middle of some scenario.
  const vacuumed = Date.now();
  await query('VACUUM ANALYZE');
  log(`VACUUM ANALYZE after the load took ${Date.now() - vacuumed} ms`);

  const context = {
    baseUrl,
    headers,
    query,
    load: (options) => load({ baseUrl, ...options }),
    databaseUrl: cluster.url,
    documentCount,
    log,
    settle: drainVectorWork,
  };
  const files = readdirSync(join(here, 'scenarios'))
    .filter((f) => f.endsWith('.mjs') && (!only || f.includes(only)))
    .sort();
  for (const file of files) {
    log(`scenario file ${file}`);
    await drainVectorWork(`embedding of the writes before ${file}`);
    const { default: run } = await import(pathToFileURL(join(here, 'scenarios', file)).href);
    const rows = await run(context);
    for (const row of rows) {
      results.push(row);
      log(
        row.p50 === undefined
          ? `${row.scenario}: ${row.compared ?? ''}`
          : `${row.scenario}: p50 ${row.p50} ms, p95 ${row.p95} ms, p97.5 ${row.p975} ms, p99 ${row.p99} ms, ${row.rps} req/s${row.errors ? `, ${row.errors} errors` : ''}${row.compared ? `; ${row.compared}` : ''}`,
      );
    }
  }
} finally {
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  await pool.end();
  await cluster.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(modelsDir, { recursive: true, force: true });
}

const report = {
  date: new Date().toISOString(),
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  documents: documentCount,
  results,
};
printTable(results);
const stamp = report.date.replace(/[:.]/g, '-');
writeFileSync(join(here, 'results', `${stamp}.json`), JSON.stringify(report, null, 2));
writeFileSync(join(here, 'results', 'latest.json'), JSON.stringify(report, null, 2));
log(`written to bench/results/${stamp}.json and bench/results/latest.json`);
const missed = results.filter(
  (r) =>
    (r.target_p95_ms !== undefined && !(r.p95 < r.target_p95_ms)) ||
    (r.target_max_ms !== undefined && !(r.max <= r.target_max_ms)),
);
if (missed.length > 0) log(`over target: ${missed.map((r) => r.scenario).join(', ')}`);

/** Documents `bench/dNNN/doc-NNNNN.md`, 100 per folder, ~200 words of markdown each. */
async function seed(count) {
  const words = `agent vector index query latency postgres search embedding document markdown chunk
    token model cache replica cluster backup restore revision snapshot audit trigger listener worker
    queue lease retry backoff metric gauge alert deploy helm chart ingress service secret config
    profile endpoint transport stream event session client server protocol schema migration table
    column partial btree range prefix offset limit page cursor batch upload update patch delete
    knowledge report phase plan roadmap design review incident outage recovery capacity throughput
    kubernetes prometheus grafana qdrant openai local lexical semantic hashing ngram normalise cosine
    similarity score snippet title tags metadata owner team product release version feature bug fix`
    .split(/\s+/)
    .filter(Boolean);
  const batch = 5000;
  for (let start = 0; start < count; start += batch) {
    await query(
      `INSERT INTO kb_documents (document_id, parent_id, title, tags, body, content_hash)
       SELECT format('bench/d%s/doc-%s.md', lpad((i / 100)::text, 3, '0'), lpad(i::text, 5, '0')),
              format('bench/d%s', lpad((i / 100)::text, 3, '0')),
              format('Document %s about %s', i, ($2::text[])[1 + i % array_length($2::text[], 1)]),
              ARRAY['bench', 'group-' || (i % 10)],
              b.body, md5(b.body)
         FROM generate_series($1::int, $3::int) AS i,
              LATERAL (
                SELECT format(E'# Document %s\n\n', i) || string_agg(
                         ($2::text[])[1 + ((i * 7919 + k * 104729 + k * k) % array_length($2::text[], 1))],
                         CASE WHEN k % 20 = 0 THEN E'.\n\n' ELSE ' ' END ORDER BY k) AS body
                  FROM generate_series(1, 200) AS k
              ) AS b`,
      [start, words, Math.min(count, start + batch) - 1],
    );
  }
}

/**
 * Waits until the vector pipeline has embedded every document written so far: before the
 * first scenario, and between scenarios, so that none is measured while the pipeline
 * catches up with the writes of the one before it.
 */
async function drainVectorWork(what = `initial embedding of ${documentCount} documents`) {
  const status = await fetch(`${baseUrl}/admin/vectors/status`, { headers });
  if (!status.ok) {
    log('no vector pipeline endpoint; not waiting for embeddings');
    return;
  }
  const started = Date.now();
  await until(
    async () =>
      Number(
        (await query(`SELECT count(*) AS n FROM kb_documents WHERE vector_status = 'pending'`))[0]
          .n,
      ) === 0,
    600_000,
    { what, everyMs: 200 },
  );
  log(`${what} took ${Date.now() - started} ms`);
}

function printTable(rows) {
  const columns = [
    'scenario',
    'p50',
    'p95',
    'p975',
    'p99',
    'max',
    'rps',
    'requests',
    'errors',
    'target_p95_ms',
    'target_max_ms',
    'compared',
  ];
  const widths = columns.map((c) =>
    Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)),
  );
  const line = (values) => values.map((v, i) => String(v ?? '').padEnd(widths[i])).join('  ');
  console.log(line(columns));
  for (const row of rows) console.log(line(columns.map((c) => row[c])));
}
