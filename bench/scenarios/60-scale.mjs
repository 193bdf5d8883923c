// Whether every read stays flat as the table grows from 30 000 to 1 000 000 documents, on a
// table of realistic shape: 50 folders (bench/f00/ … bench/f49/, so 600, 6 000 and 20 000
// documents a folder), rows inserted in no order of id, bodies of a few hundred bytes, an
// audit row per document (the triggers write it), a team-a/ folder of 50, and 200 documents
// edited three times (their history). An earlier version grew the table in id order with
// folders of 100 documents: index scans then read the heap in order and every folder was
// small, which hid a plan that read a whole folder for one page.
//
// A PostgreSQL and two servers of its own (the bench server's seeded documents would be in the
// way): one plain, one with an ACCESS_POLICY granting the key team-a/ and one bench folder;
// neither runs the vector pipeline (documents are inserted by SQL as `skipped`). Each read is
// measured at each size at concurrency 10 (the best of BENCH_SCALE_ROUNDS runs, default 3: the
// machine's noise only ever slows a run down), then the table grows by SQL in batches of
// 100 000, the servers fold the folder counts, and VACUUM ANALYZE runs as an operator's
// autovacuum would. Each row at a larger size gives its requests/s as a share of its own at
// the first size (target ≥ 0.75); a read that misses it gets the plans of its statements at
// the last size (EXPLAIN ANALYZE, as the server prepares them) in the log and in
// bench/results/scale-latest.json.
//
// `BENCH_DOCS=0 BENCH_ONLY=60 npm run bench` runs it alone (some 10 minutes on 2 cores).
// BENCH_SCALE_SIZES (default 30000,300000,1000000; multiples of 50, at least 27 500 so that a
// folder holds the deep page) and BENCH_SCALE_REQUESTS (default 2000) make a shorter run.
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { envelope, load, mcpHeaders, round, startServer, toolCall, until } from '../lib.mjs';
import { OwnPostgres } from '../own-postgres.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const KEY = 'scale-reader-key-0123456789abcdef';
const HEADERS = { 'X-API-Key': KEY };
const MCP = mcpHeaders(HEADERS);
const CONCURRENCY = 10;
const WARMUP = 500;
const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 2000);
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 3);
const SIZES = (process.env.BENCH_SCALE_SIZES ?? '30000,300000,1000000').split(',').map(Number);
const FOLDERS = 50;
const BATCH = 100_000;
const TARGET = 0.75;
/** The bench folder the policy grants, beside team-a/. */
const GRANTED = 'bench/f07';
const POLICY = { rules: [{ who: ['key:reader'], read: ['team-a/', `${GRANTED}/`] }] };
const DEEP_OFFSET = 500;
const EDITED = 200;

const WORDS = `agent vector index query latency postgres search embedding markdown chunk token
  model cache replica cluster backup restore revision snapshot audit trigger listener worker
  queue lease retry backoff metric gauge alert deploy helm chart ingress service secret config
  profile endpoint transport stream event session client server protocol schema migration
  table column range prefix offset cursor batch upload update patch knowledge report phase plan
  roadmap design review incident outage recovery capacity throughput kubernetes prometheus
  grafana lexical semantic similarity score snippet title metadata owner team product release
  version feature`
  .split(/\s+/)
  .filter(Boolean);
const SENTENCES = [
  'The on-call engineer confirmed the alert within five minutes and opened an incident channel.',
  'Latency at the ninety-fifth percentile stayed under fifty milliseconds for the whole week.',
  'We moved the nightly backup window so that it no longer overlaps the reindexing job.',
  'Each tenant gets its own folder, and the access policy grants whole folders only.',
  'The migration adds an index concurrently, so writers are never blocked while it builds.',
  'Rollouts go region by region; a failed health check stops the rollout and pages the owner.',
  'Search results combine lexical and semantic scores, then highlight the matching passages.',
  'The design review asked for a runbook entry and a dashboard panel before the launch.',
  'Capacity planning assumes a doubling of documents every six months for the next two years.',
  'A retry with exponential backoff hides short outages of the embedding provider from users.',
  'Quarterly goals: fewer pages at night, faster restores, and a smaller bill for storage.',
  'Customers asked for an export of their folders as markdown files with the same layout.',
  'The audit trail records who changed what and when, including refused attempts.',
  'Replica lag is measured every ten seconds and graphed next to the write throughput.',
  'Old snapshots are kept so that any earlier revision of a document can be restored.',
  'The load test ran at concurrency ten against a copy of the production database.',
];

export default async function scale({ log }) {
  if (SIZES.some((n, k) => n % FOLDERS !== 0 || (k > 0 && n <= SIZES[k - 1]))) {
    throw new Error(`scale: BENCH_SCALE_SIZES must grow, in multiples of ${FOLDERS}`);
  }
  if (SIZES[0] / FOLDERS < DEEP_OFFSET + 50) {
    throw new Error(`scale: the first size must hold ${DEEP_OFFSET + 50} documents a folder`);
  }
  const started = performance.now();
  const elapsed = () => `${Math.round((performance.now() - started) / 1000)} s`;
  const say = (message) => log(`scale [${elapsed()}]: ${message}`);
  const cluster = await OwnPostgres.create();
  const db = new pg.Client({ connectionString: cluster.url });
  const servers = [];
  const measured = new Map(); // read name → results by size, in SIZES order
  const growth = [];
  let plans = [];
  try {
    // The migrations run once, in the first server; the second starts on the migrated base.
    const env = {
      API_KEYS: `reader:${KEY}:admin,internal`,
      VECTOR_SYNC_ENABLED: 'false',
      RATE_LIMIT_ADMIN_WRITES: 'off',
      RATE_LIMIT_TOOL_CALLS: 'off',
    };
    const plain = await startServer({ databaseUrl: cluster.url, env });
    servers.push(plain);
    const guarded = await startServer({
      databaseUrl: cluster.url,
      env: { ...env, ACCESS_POLICY: JSON.stringify(POLICY) },
    });
    servers.push(guarded);
    await db.connect();
    // The audit rows name the importer, as an import by a person would.
    await db.query(`SET app.actor = 'bench-import'`);
    say(
      `own PostgreSQL on port ${cluster.port}; servers ${plain.baseUrl} and ${guarded.baseUrl} (policy: ${POLICY.rules[0].read.join(', ')})`,
    );

    let held = 0;
    let reads;
    for (const size of SIZES) {
      const step = await grow(db, held, size, say);
      held = size;
      growth.push(step);
      if (reads === undefined) {
        const sample = await sampleOf(db, say);
        reads = readsOf(sample, { plain: plain.baseUrl, policy: guarded.baseUrl });
        // The servers have answered nothing yet: every kind of read, unmeasured, so that the
        // first size is not measured on cold code (which would make the larger look faster).
        for (const server of [plain, guarded]) {
          const own = reads.filter((read) => read.baseUrl === server.baseUrl);
          await load({
            baseUrl: server.baseUrl,
            concurrency: CONCURRENCY,
            requests: 300 * own.length,
            request: (i) => own[i % own.length].request(i),
          });
        }
      }
      say(`measuring ${reads.length} reads at ${label(size)} documents`);
      for (const read of reads) {
        await check(read, size);
        const runs = [];
        for (let r = 0; r < (read.rounds ?? ROUNDS); r++) {
          runs.push(
            await load({
              baseUrl: read.baseUrl,
              concurrency: read.concurrency ?? CONCURRENCY,
              requests: read.requests ?? REQUESTS,
              warmup: read.warmup ?? WARMUP,
              request: read.request,
            }),
          );
        }
        const best = runs.reduce((a, b) => (b.rps > a.rps ? b : a));
        if (best.errors > 0)
          say(`${read.name}: ${best.errors} errors ${JSON.stringify(best.statuses)}`);
        if (!measured.has(read.name)) measured.set(read.name, []);
        measured.get(read.name).push(best);
        const base = measured.get(read.name)[0];
        say(
          `${read.name} at ${label(size)}: ${best.rps} req/s, p50 ${best.p50} ms, p95 ${best.p95} ms, p97.5 ${best.p975} ms${size === SIZES[0] ? '' : `; ${verdict(best.rps / base.rps)}`}`,
        );
      }
    }

    const missed = reads.filter((read) =>
      measured
        .get(read.name)
        .some((result, k) => k > 0 && result.rps / measured.get(read.name)[0].rps < TARGET),
    );
    const explain = process.env.BENCH_SCALE_EXPLAIN === 'all' ? reads : missed;
    if (explain.length > 0) plans = await explainAll(db, explain, say);
  } finally {
    for (const server of servers) await server.stop();
    await db.end().catch(() => undefined);
    await cluster.destroy();
  }

  const rows = [];
  const table = [];
  for (const [name, results] of measured) {
    const base = results[0];
    const entry = { read: name };
    results.forEach((result, k) => {
      const size = SIZES[k];
      const ratio = result.rps / base.rps;
      rows.push({
        scenario: `scale ${name} at ${label(size)} documents`,
        documents: size,
        ...result,
        ...(k === 0
          ? {}
          : {
              rps_ratio: round(ratio),
              target_rps_ratio: TARGET,
              compared: `rps ${verdict(ratio)}; p97.5 ${round(result.p975 / base.p975)}×`,
            }),
      });
      entry[size] = {
        rps: result.rps,
        p50: result.p50,
        p95: result.p95,
        p975: result.p975,
        ...(k === 0 ? {} : { ratio: round(ratio), pass: ratio >= TARGET }),
      };
    });
    table.push(entry);
  }
  for (const line of markdownTable(table)) process.stderr.write(`${line}\n`);
  const misses = table.flatMap((entry) =>
    SIZES.slice(1)
      .filter((size) => entry[size] && !entry[size].pass)
      .map((size) => `${entry.read} at ${label(size)}`),
  );
  say(misses.length === 0 ? 'every read met its target' : `missed: ${misses.join('; ')}`);
  writeFileSync(
    join(here, '..', 'results', 'scale-latest.json'),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: { cpus: cpus().length, node: process.version, loadavg: loadavg() },
        sizes: SIZES,
        concurrency: CONCURRENCY,
        requests: REQUESTS,
        rounds: ROUNDS,
        target_rps_ratio: TARGET,
        growth,
        table,
        plans,
      },
      null,
      2,
    ),
  );
  return rows;
}

/**
 * Grows the bench folders from `from` to `to` documents (the first step also writes team-a/
 * before them and, after them, the edits that give documents a history), waits for the
 * servers to fold the folder counts and checks them, then VACUUM ANALYZE.
 */
async function grow(db, from, to, say) {
  const t0 = performance.now();
  if (from === 0) {
    // First, so that the newest audit rows are the bench folders' at every size: the change
    // feed under the policy reads the same share of rows to fill a page.
    await db.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, tags, body, content_hash, vector_status)
       SELECT format('team-a/plan-%s.md', lpad(i::text, 2, '0')), 'team-a', format('Team A plan %s', i),
              ARRAY['team-a'], format(E'# Team A plan %s\\n\\n%s', i, $1::text), md5(i::text), 'skipped'
         FROM generate_series(1, 50) AS i ORDER BY md5(i::text)`,
      [SENTENCES.join(' ')],
    );
  }
  for (let at = from; at < to; at += BATCH) {
    const end = Math.min(to, at + BATCH);
    const t = performance.now();
    await db.query(
      `WITH src AS (
         SELECT i, format('bench/f%s', lpad((i % ${FOLDERS})::text, 2, '0')) AS folder,
                ($3::text[])[1 + abs(hashint4(i) % cardinality($3::text[]))] AS a,
                ($3::text[])[1 + abs(hashint4(i + 7777777) % cardinality($3::text[]))] AS b
           FROM generate_series($1::int, $2::int - 1) AS i
       ), doc AS (
         SELECT i, folder, format('%s/%s-%s-%s.md', folder, a, b, lpad(i::text, 7, '0')) AS id,
                format('%s %s, notes %s', initcap(a), b, i) AS title, ARRAY[a, b] AS tags,
                format(E'# %s %s, notes %s\\n\\n%s %s\\n\\n%s %s\\n', initcap(a), b, i,
                       ($4::text[])[1 + abs(hashint4(i * 3) % cardinality($4::text[]))],
                       ($4::text[])[1 + abs(hashint4(i * 3 + 1) % cardinality($4::text[]))],
                       ($4::text[])[1 + abs(hashint4(i * 3 + 2) % cardinality($4::text[]))],
                       ($4::text[])[1 + abs(hashint4(i * 5 + 7) % cardinality($4::text[]))]) AS body
           FROM src
       )
       INSERT INTO kb_documents (document_id, parent_id, title, tags, body, content_hash, vector_status)
       SELECT id, folder, title, tags, body, md5(body), 'skipped' FROM doc
        ORDER BY md5(i::text)`,
      [at, end, WORDS, SENTENCES],
    );
    say(`inserted bench documents ${label(at)}–${label(end)} in ${ms(t)}`);
  }
  if (from === 0) {
    // Three edits of EDITED documents: their history (snapshots) and audit rows.
    for (let edit = 1; edit <= 3; edit++) {
      await db.query(
        `UPDATE kb_documents SET body = body || $2::text, revision = revision + 1
          WHERE document_id IN (SELECT document_id FROM kb_documents
                                 WHERE document_id LIKE 'bench/%' ORDER BY md5(document_id) LIMIT $1)`,
        [EDITED, `\nEdit ${edit}: ${SENTENCES[edit]}\n`],
      );
    }
    // The edits made them pending (a trigger); nothing embeds here.
    await db.query(
      `UPDATE kb_documents SET vector_status = 'skipped' WHERE vector_status = 'pending'`,
    );
  }
  const inserted = ms(t0);
  // The servers fold the triggers' deltas every 10 s: the counts must be exact once folded.
  const t1 = performance.now();
  await until(
    async () =>
      (await db.query(`SELECT count(*)::int AS n FROM kb_folder_count_deltas`)).rows[0].n === 0,
    60_000,
    { what: 'the servers to fold the folder counts', everyMs: 500 },
  );
  const folded = ms(t1);
  const { rows } = await db.query(
    `SELECT folder, subtree::int AS subtree FROM kb_folder_counts
      WHERE folder IN ('bench', $1, 'team-a')`,
    [GRANTED],
  );
  const count = Object.fromEntries(rows.map((row) => [row.folder, row.subtree]));
  const expected = { bench: to, [GRANTED]: to / FOLDERS, 'team-a': 50 };
  for (const [folder, n] of Object.entries(expected)) {
    if (count[folder] !== n) {
      throw new Error(`scale: folder count of "${folder}" is ${count[folder]}, expected ${n}`);
    }
  }
  const t2 = performance.now();
  await db.query('VACUUM ANALYZE');
  const vacuumed = ms(t2);
  const [{ documents, audit, bytes }] = (
    await db.query(
      `SELECT (SELECT count(*) FROM kb_documents)::int AS documents,
              (SELECT count(*) FROM kb_audit)::int AS audit,
              pg_size_pretty(pg_total_relation_size('kb_documents')) AS bytes`,
    )
  ).rows;
  say(
    `table at ${label(documents)} documents (${bytes} with indexes), ${label(audit)} audit rows: inserted in ${inserted}, counts folded in ${folded}, VACUUM ANALYZE ${vacuumed}`,
  );
  return { documents: to, inserted, folded, vacuumed, size: bytes };
}

/** Documents of the first size that every size's requests name. */
async function sampleOf(db, say) {
  const ids = async (where, limit) =>
    (
      await db.query(
        `SELECT document_id FROM kb_documents WHERE ${where} ORDER BY md5(document_id) LIMIT ${limit}`,
      )
    ).rows.map((row) => row.document_id);
  const sample = {
    ids: await ids(`document_id LIKE 'bench/%'`, 500),
    edited: await ids(`document_id LIKE 'bench/%' AND revision = 4`, EDITED),
    middle: await ids(`document_id >= 'bench/f20/' AND document_id < 'bench/f30/'`, 100),
    granted: await ids(`document_id LIKE '${GRANTED}/%'`, 100),
  };
  if (sample.edited.length !== EDITED) throw new Error('scale: the edited documents are missing');
  say(`sample: ${sample.ids.length} ids, e.g. ${sample.ids[0]}`);
  return sample;
}

/**
 * The reads: each a request by number, the server it goes to, a check of one answer (a fast
 * wrong answer is never a latency), and the statements it runs, for EXPLAIN.
 */
function readsOf(sample, baseUrls) {
  const folder = (i) => `bench/f${String(i % FOLDERS).padStart(2, '0')}`;
  const pick = (list, i) => list[(i * 7919) % list.length];
  const cursor = (id) => `k1.${Buffer.from(id, 'utf8').toString('base64url')}`;
  const rest = (path) => ({ path, headers: HEADERS });
  const mcp = (body) => ({ method: 'POST', path: '/mcp', headers: MCP, body });
  const complete = (uri, name, value, i) =>
    envelope(
      'completion/complete',
      { ref: { type: 'ref/resource', uri }, argument: { name, value } },
      i,
    );
  const policyCountsOf = [GRANTED, 'team-a'];
  const reads = [
    {
      name: 'mcp list_documents (a folder, limit 50)',
      request: (i) => mcp(toolCall('list_documents', { prefix: `${folder(i)}/`, limit: 50 }, i)),
      check: (r) => r.structuredContent.items.length === 50,
      statements: (l) => [['list', l.listQueryForExplain('bench/f01/', 50, 0)]],
    },
    {
      name: 'mcp get_document',
      request: (i) => mcp(toolCall('get_document', { document_id: pick(sample.ids, i) }, i)),
      check: (r) => typeof r.structuredContent.body === 'string',
      statements: () => [],
    },
    {
      name: 'rest list (a folder, limit 50)',
      request: (i) => rest(`/documents?prefix=${encodeURIComponent(`${folder(i)}/`)}&limit=50`),
      check: (r) => r.items.length === 50,
      statements: (l) => [['list', l.listQueryForExplain('bench/f01/', 50, 0)]],
    },
    {
      name: `rest list (a folder, offset ${DEEP_OFFSET})`,
      request: (i) =>
        rest(
          `/documents?prefix=${encodeURIComponent(`${folder(i)}/`)}&limit=50&offset=${DEEP_OFFSET}`,
        ),
      check: (r) => r.items.length === 50,
      statements: (l) => [['list', l.listQueryForExplain('bench/f01/', 50, DEEP_OFFSET)]],
    },
    {
      name: 'mcp resources/list (first page)',
      request: (i) => mcp(envelope('resources/list', {}, i)),
      check: (r) => r.resources.length === 50 && r.nextCursor !== undefined,
      statements: (l) => [['page', l.pageQueryForExplain(null, '', 51)]],
    },
    {
      name: 'mcp resources/list (after a cursor mid-table)',
      request: (i) =>
        mcp(envelope('resources/list', { cursor: cursor(pick(sample.middle, i)) }, i)),
      check: (r) => r.resources.length === 50,
      statements: (l) => [['page', l.pageQueryForExplain(sample.middle[0], '', 51)]],
    },
    {
      name: 'mcp completion/complete (document id in a folder)',
      request: (i) => mcp(complete('kb://{+document_id}', 'document_id', `${folder(i)}/`, i)),
      check: (r) => r.completion.values.length === 100 && r.completion.hasMore === true,
      statements: (l) => [['ids', l.idsQueryForExplain('bench/f01/', 101)]],
    },
    {
      name: 'mcp completion/complete (folder)',
      request: (i) => mcp(complete('kb://{+folder}/', 'folder', `bench/f${i % 5}`, i)),
      check: (r) => r.completion.values.length === 10,
      statements: (l) => [['folders', l.foldersQueryForExplain('bench/f1', 101)]],
    },
    {
      name: 'rest folders (root)',
      request: () => rest('/documents/folders'),
      check: (r, size) => r.folders.length === 2 && r.folders[0].documents === size,
      statements: (l, c) => [
        ['folders', l.foldersQueryForExplain('', 501)],
        ['counts', c.countsQueryForExplain(['', 'bench', 'team-a'])],
      ],
    },
    {
      name: 'rest folders (?parent=bench)',
      request: () => rest('/documents/folders?parent=bench'),
      check: (r, size) =>
        r.folders.length === FOLDERS && r.folders.reduce((sum, f) => sum + f.documents, 0) === size,
      statements: (l, c) => [
        ['folders', l.foldersQueryForExplain('bench/', 501)],
        [
          'counts',
          c.countsQueryForExplain([
            'bench',
            ...Array.from({ length: FOLDERS }, (_, n) => folder(n)),
          ]),
        ],
      ],
    },
    {
      name: 'rest changes (a folder, limit 50)',
      request: (i) => rest(`/documents/changes?folder=${encodeURIComponent(folder(i))}&limit=50`),
      check: (r) => r.changes.length === 50,
      statements: (l, c, f, upper) => [
        [
          'feed',
          f.pageQueryForExplain(feedFilter('bench/f01/', upper('bench/f01/')), 51),
          'unprepared',
        ],
      ],
    },
    {
      // What the console's pipeline page asks every 5 s: one at a time, a latency.
      name: 'rest vectors status (one at a time)',
      request: () => rest('/admin/vectors/status'),
      check: (r, size) => r.counts.skipped === size + 50,
      statements: () => [],
      concurrency: 1,
      requests: 20,
      warmup: 2,
      rounds: 1,
    },
    {
      name: 'rest history of a document',
      request: (i) => rest(`/documents/${pick(sample.edited, i)}/history`),
      check: (r) => r.items.length === 3,
      statements: () => [],
    },
  ].map((read) => ({ ...read, baseUrl: baseUrls.plain }));
  const guarded = [
    {
      name: 'policy: mcp list_documents (root, limit 50)',
      request: (i) => mcp(toolCall('list_documents', { limit: 50 }, i)),
      check: (r) =>
        r.structuredContent.items.length === 50 &&
        r.structuredContent.items.every((d) => d.document_id.startsWith(`${GRANTED}/`)),
      statements: (l) => [['list', l.listQueryForExplain(`${GRANTED}/`, 50, 0)]],
    },
    {
      name: 'policy: rest list (root, limit 50)',
      request: () => rest('/documents?limit=50'),
      check: (r) => r.items.length === 50,
      statements: (l) => [['list', l.listQueryForExplain(`${GRANTED}/`, 50, 0)]],
    },
    {
      name: `policy: rest list (root, offset ${DEEP_OFFSET})`,
      request: () => rest(`/documents?limit=50&offset=${DEEP_OFFSET}`),
      check: (r) => r.items.length === 50,
      statements: (l, c) => [
        ['counts', c.countsQueryForExplain([GRANTED, 'team-a'])],
        ['list', l.listQueryForExplain(`${GRANTED}/`, 50, DEEP_OFFSET)],
      ],
    },
    {
      name: 'policy: rest folders (root)',
      request: () => rest('/documents/folders'),
      check: (r, size) =>
        r.folders.length === 2 &&
        r.folders[0].documents === size / FOLDERS &&
        r.documents_here === 0,
      statements: (_l, c) => [['counts', c.countsQueryForExplain(policyCountsOf)]],
    },
    {
      name: 'policy: rest folders (?parent=bench)',
      request: () => rest('/documents/folders?parent=bench'),
      check: (r) => r.folders.length === 1 && r.folders[0].folder === GRANTED,
      statements: (_l, c) => [['counts', c.countsQueryForExplain(policyCountsOf)]],
    },
    {
      name: 'policy: mcp resources/list (first page)',
      request: (i) => mcp(envelope('resources/list', {}, i)),
      check: (r) => r.resources.length === 50,
      statements: (l) => [['page', l.pageQueryForExplain(null, `${GRANTED}/`, 51)]],
    },
    {
      name: 'policy: mcp resources/list (after a cursor)',
      request: (i) =>
        mcp(envelope('resources/list', { cursor: cursor(pick(sample.granted, i)) }, i)),
      check: (r) => r.resources.length > 0,
      statements: (l) => [['page', l.pageQueryForExplain(sample.granted[0], `${GRANTED}/`, 51)]],
    },
    {
      name: 'policy: mcp completion/complete (document id)',
      request: (i) => mcp(complete('kb://{+document_id}', 'document_id', 'bench/f0', i)),
      check: (r) =>
        r.completion.values.length === 100 &&
        r.completion.values.every((id) => id.startsWith(`${GRANTED}/`)),
      statements: (l) => [['ids', l.idsQueryForExplain(`${GRANTED}/`, 101)]],
    },
    {
      name: 'policy: rest changes (all, limit 50)',
      request: () => rest('/documents/changes?limit=50'),
      check: (r) => r.changes.length === 50,
      statements: (_l, _c, f) => [
        [
          'feed',
          f.pageQueryForExplain(feedFilter(null, null), 51, [`${GRANTED}/%`, 'team-a/%']),
          'unprepared',
        ],
      ],
    },
  ].map((read) => ({ ...read, baseUrl: baseUrls.policy }));
  return [...reads, ...guarded];
}

function feedFilter(from, to) {
  return { from, to, actor: null, operation: null, since: null, until: null, before: null };
}

/** One request of `read`, its answer checked: a fast wrong answer is never measured. */
async function check(read, size) {
  const { method = 'GET', path, headers, body } = read.request(1);
  const response = await fetch(`${read.baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let ok = false;
  try {
    const json = JSON.parse(text.startsWith('event:') ? text.split('\ndata: ')[1] : text);
    const answer = body === undefined ? json : json.result;
    ok = response.ok && !json.error && !answer?.isError && read.check(answer, size);
  } catch {
    ok = false;
  }
  if (!ok) {
    throw new Error(
      `scale: ${read.name}: the check request failed: ${response.status} ${text.slice(0, 400)}`,
    );
  }
}

/**
 * The plans of the reads' statements at the last size: EXPLAIN (ANALYZE, BUFFERS) as the server
 * runs them, a named statement after six executions (PostgreSQL then keeps a generic plan if
 * it looks no dearer), the change feed unprepared (planned with its values).
 */
async function explainAll(db, reads, say) {
  // The statements as the built server writes them (CommonJS: its exports are the default).
  const dist = async (path) =>
    (await import(pathToFileURL(join(here, '..', '..', 'dist', 'src', 'documents', path)).href))
      .default;
  const { DocumentListingsRepository } = await dist('document-listings.repository.js');
  const { FolderCountsRepository } = await dist('folder-counts.repository.js');
  const { ChangeFeedRepository } = await dist('change-feed.repository.js');
  const { prefixUpperBound } = await dist('document-id.js');
  const listings = new DocumentListingsRepository(undefined);
  const counts = new FolderCountsRepository(undefined);
  // The feed counts a folder's rows before it writes its query: it needs the database.
  const feed = new ChangeFeedRepository({
    query: async (sql, params) => (await db.query(sql, params)).rows,
  });
  const plans = [];
  for (const read of reads) {
    for (const [what, statement, how] of read.statements(
      listings,
      counts,
      feed,
      prefixUpperBound,
    )) {
      const [sql, params] = await statement;
      const plan =
        how === 'unprepared' ? await analyzed(db, sql, params) : await prepared(db, sql, params);
      plans.push({ read: read.name, statement: what, sql, params, plan });
      process.stderr.write(`\n-- ${read.name}: ${what} ${JSON.stringify(params)}\n${plan}\n`);
    }
  }
  say(`plans of ${reads.length} reads written`);
  return plans;
}

async function analyzed(db, sql, params) {
  const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}

async function prepared(db, sql, params) {
  const execute = `EXECUTE scale_probe(${params.map(literal).join(', ')})`;
  await db.query('BEGIN');
  try {
    await db.query(`PREPARE scale_probe AS ${sql}`);
    for (let i = 0; i < 6; i++) await db.query(execute);
    const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${execute}`);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await db.query('ROLLBACK');
    await db.query('DEALLOCATE ALL');
  }
}

function literal(value) {
  if (value === null) return 'NULL';
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(', ')}]::text[]`;
  return typeof value === 'string' ? `'${value.replace(/'/g, "''")}'` : String(value);
}

/** `0.93× of 30 000 (target ≥ 0.75×): PASS` */
function verdict(ratio) {
  return `${round(ratio)}× of ${label(SIZES[0])} (target ≥ ${TARGET}×): ${ratio >= TARGET ? 'PASS' : 'MISS'}`;
}

/** read × size: req/s and p50/p95/p97.5 ms, with the ratio to the first size. */
function markdownTable(table) {
  const head = ['read', ...SIZES.map((size) => `${label(size)}: req/s, p50/p95/p97.5 ms`)];
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`];
  for (const entry of table) {
    const cells = SIZES.map((size) => {
      const m = entry[size];
      if (m === undefined) return '';
      const ratio = m.ratio === undefined ? '' : ` (${m.ratio}× ${m.pass ? 'PASS' : '**MISS**'})`;
      return `${label(Math.round(m.rps))}${ratio}, ${m.p50}/${m.p95}/${m.p975}`;
    });
    lines.push(`| ${entry.read} | ${cells.join(' | ')} |`);
  }
  return lines;
}

/** 1000000 → "1 000 000". */
function label(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

function ms(since) {
  return `${Math.round(performance.now() - since)} ms`;
}
