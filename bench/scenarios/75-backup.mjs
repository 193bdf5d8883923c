// Backup and restore (src/backup/, docs/operations.md), on a PostgreSQL and servers of their
// own: `agent-data backup` of a knowledge base of BENCH_BACKUP_SIZES documents (default 10 000
// then 50 000) of 2–6 KB each, a tenth of them updated once (so that earlier versions are
// kept too): its time, its bytes, and the server's resident memory before, at its peak during,
// and after the backup. The backup streams every table through gzip with backpressure, so the
// peak's growth should be small and the same at either size.
//
// Then the largest backup is restored into a new server on an empty database: the time until
// lexical search finds every restored document (`agent-data restore` returns then, showing
// progress past the server's answer), and how long the vectors take to follow (bounded by
// BENCH_BACKUP_VECTOR_WAIT_S, default 600 s).
//
// `BENCH_DOCS=0 BENCH_ONLY=75 npm run bench` runs it alone; BENCH_BACKUP_SIZES=5000 makes it
// small.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { round, startServer, until } from '../lib.mjs';
import { OwnPostgres } from '../own-postgres.mjs';

const run = promisify(execFile);
const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'agent-data.js');
const SIZES = (process.env.BENCH_BACKUP_SIZES ?? '10000,50000').split(',').map(Number);
const VECTOR_WAIT_S = Number(process.env.BENCH_BACKUP_VECTOR_WAIT_S ?? 600);
const KEY = 'backup-bench-key-0123456789abcdef';
const HEADERS = { 'X-API-Key': KEY };
const WORDS = `backup restore snapshot manifest checksum stream gzip table audit history
  version source document folder agent search lexical vector index query server`
  .split(/\s+/)
  .filter(Boolean);

export default async function backup({ log }) {
  const work = mkdtempSync(join(tmpdir(), 'agent-data-bench-backup-'));
  chmodSync(work, 0o755);
  const source = await OwnPostgres.create();
  const pool = new pg.Pool({ connectionString: source.url, max: 2 });
  // The pipeline off: what is measured is the backup, not embedding beside it.
  const server = await startServer({
    databaseUrl: source.url,
    env: { API_KEYS: `ops:${KEY}:admin`, VECTOR_SYNC_ENABLED: 'false' },
  });
  const rows = [];
  let last;
  try {
    let seeded = 0;
    for (const size of SIZES) {
      await seed(pool, seeded, size);
      seeded = size;
      await pool.query('VACUUM ANALYZE');
      const file = join(work, `kb-${size}.backup.gz`);
      const measured = await measuredBackup(server, file);
      last = { size, file };
      const { report } = measured;
      const growth = measured.peak - measured.before;
      rows.push({
        scenario: `backup: agent-data backup of ${size} documents`,
        compared: `${round(report.seconds)} s, ${round(report.bytes / 1e6)} MB (${report.tables.kb_documents} documents, ${report.tables.kb_document_snapshots} versions, ${report.tables.kb_audit} audit rows); server RSS ${mb(measured.before)} MB before, ${mb(measured.peak)} MB at the peak (+${mb(growth)}), ${mb(measured.after)} MB after`,
        seconds: round(report.seconds),
        bytes: report.bytes,
        rss_before_mb: mb(measured.before),
        rss_peak_mb: mb(measured.peak),
        rss_after_mb: mb(measured.after),
      });
      log(`backup: ${rows.at(-1).scenario}: ${rows.at(-1).compared}`);
    }
    rows.push(await measuredRestore(last, log));
    log(`backup: ${rows.at(-1).scenario}: ${rows.at(-1).compared}`);
  } finally {
    await server.stop();
    await pool.end();
    await source.destroy();
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

/** Documents `from` to `to` - 1 written by SQL (triggers and all), a tenth updated once. */
async function seed(pool, from, to) {
  await pool.query(
    `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
     SELECT 'backup/f' || (i % 100) || '/doc-' || i || '.md', 'backup/f' || (i % 100),
            'Document ' || i, body, md5(body)
       FROM generate_series($1::int, $2::int - 1) AS i,
            LATERAL (SELECT '# Document ' || i || E'\\n\\n' ||
                            string_agg(($3::text[])[1 + abs(hashtext(i || ':' || k)) % cardinality($3::text[])], ' ')
                       AS body
                       FROM generate_series(1, 300 + (i * 7919) % 600) AS k) AS b`,
    [from, to, WORDS],
  );
  await pool.query(
    `UPDATE kb_documents SET body = body || E'\\nEdited once.', revision = revision + 1
      WHERE document_id LIKE 'backup/f7/%' AND NOT body LIKE '%Edited once.'`,
  );
}

/** `agent-data backup FILE --json`, with the server's RSS sampled every 50 ms meanwhile. */
async function measuredBackup(server, file) {
  const before = rssOf(server.child.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.child.pid))), 50);
  let report;
  try {
    const { stdout } = await run(process.execPath, [BIN, 'backup', file, '--json'], {
      env: { ...process.env, AGENT_DATA_URL: server.baseUrl, AGENT_DATA_API_KEY: KEY },
    });
    report = JSON.parse(stdout);
  } finally {
    clearInterval(sampler);
  }
  if (report.bytes !== statSync(file).size)
    throw new Error('the backup file is not what was reported');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  return { report, before, peak, after: rssOf(server.child.pid) };
}

/** The restore of `backup` into a new server on an empty database, then its vectors. */
async function measuredRestore({ size, file }, log) {
  const target = await OwnPostgres.create();
  const pool = new pg.Pool({ connectionString: target.url, max: 2 });
  const server = await startServer({
    databaseUrl: target.url,
    env: { API_KEYS: `ops:${KEY}:admin` },
  });
  try {
    const started = performance.now();
    const { stdout } = await run(process.execPath, [BIN, 'restore', file, '--json'], {
      env: { ...process.env, AGENT_DATA_URL: server.baseUrl, AGENT_DATA_API_KEY: KEY },
    });
    const restored = JSON.parse(stdout);
    const seconds = (performance.now() - started) / 1000;
    const search = await fetch(`${server.baseUrl}/search?mode=lexical&query=manifest+checksum`, {
      headers: HEADERS,
    });
    const found = (await search.json()).results?.length ?? 0;
    log(`backup: restored ${size} documents in ${round(seconds)} s; waiting for their vectors`);
    const vectorsFrom = performance.now();
    let vectors;
    try {
      await until(
        async () => {
          const { rows } = await pool.query(
            `SELECT count(*)::int AS pending FROM kb_documents WHERE vector_status = 'pending'`,
          );
          return rows[0].pending === 0;
        },
        VECTOR_WAIT_S * 1000,
        { what: 'the vectors of the restored documents', everyMs: 1000 },
      );
      vectors = `their vectors ${round((performance.now() - vectorsFrom) / 1000)} s later`;
    } catch {
      vectors = `their vectors not all done ${VECTOR_WAIT_S} s later`;
    }
    return {
      scenario: `backup: agent-data restore of ${size} documents into an empty server`,
      compared: `${round(seconds)} s until lexical search finds ${restored.lexically_indexed} of ${restored.lexically_indexable} (the server's answer after ${round(restored.seconds)} s; a lexical search then found ${found}), ${vectors}; ${round(readFileSync(file).length / 1e6)} MB sent`,
      seconds: round(seconds),
    };
  } finally {
    await server.stop();
    await pool.end();
    await target.destroy();
  }
}

function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
}

function mb(bytes) {
  return round(bytes / 1e6);
}
