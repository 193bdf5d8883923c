// Links between documents (docs/documents.md, "Links between documents"), against the targets
// of docs/performance.md:
// - bulk writes of documents with 20 links each cost at most 1.15 × the same documents without
//   links: 200 documents a request, two requests at a time, the two kinds alternating (ABBA)
//   so that the machine's drift falls on both alike;
// - the first page of the backlinks of a document with 10 000 inbound links, p95 < 20 ms at
//   1 000 000 documents (a third of which have links of their own);
// - a move of a document with 1 000 inbound links (every linking document written again)
//   completes in < 2 s.
//
// A PostgreSQL and a server of its own, without the vector pipeline (it would index the
// writes of both kinds alike, and the million documents are inserted by SQL). The documents
// that link are written through the bulk route, so their links are the server's to extract.
//
// `BENCH_DOCS=0 BENCH_ONLY=85 npm run bench` runs it alone. BENCH_LINKS_SIZE (default
// 1000000) sets the size of the table; BENCH_LINKS_BULK (default 10000) the documents of
// each kind written for the ratio; BENCH_LINKS_RATIO_RUNS (default 3) how many times the ratio
// is measured (the row gives the median).
import pg from 'pg';
import { load, round, startServer, until } from '../lib.mjs';
import { OwnPostgres } from '../own-postgres.mjs';
import { bulkBody } from './15-bulk.mjs';

const KEY = 'links-bench-key-0123456789abcdef';
const HEADERS = { 'X-API-Key': KEY };
const SIZE = Number(process.env.BENCH_LINKS_SIZE ?? 1_000_000);
const BULK = Number(process.env.BENCH_LINKS_BULK ?? 10_000);
const RATIO_RUNS = Number(process.env.BENCH_LINKS_RATIO_RUNS ?? 3);
const PER_REQUEST = 200;
const BATCH = 100_000;
const INBOUND = 10_000;
const MOVED_INBOUND = 1_000;
const TARGETS = { ratio: 1.15, backlinksP95: 20, moveMs: 2_000 };

export default async function links({ log }) {
  const started = performance.now();
  const say = (message) =>
    log(`links [${Math.round((performance.now() - started) / 1000)} s]: ${message}`);
  const cluster = await OwnPostgres.create();
  const db = new pg.Client({ connectionString: cluster.url });
  let server;
  const rows = [];
  try {
    server = await startServer({
      databaseUrl: cluster.url,
      env: {
        API_KEYS: `bench:${KEY}:admin,internal`,
        VECTOR_SYNC_ENABLED: 'false',
        RATE_LIMIT_ADMIN_WRITES: 'off',
        RATE_LIMIT_TOOL_CALLS: 'off',
      },
    });
    await db.connect();
    await grow(db, 0, 30_000, say);

    rows.push(...(await bulkRatio(server.baseUrl, say)));

    await grow(db, 30_000, SIZE, say);
    rows.push(await backlinks(server.baseUrl, db, say));
    rows.push(await move(server.baseUrl, db, say));
  } finally {
    await server?.stop();
    await db.end().catch(() => undefined);
    await cluster.destroy();
  }
  return rows;
}

/**
 * The `i`th bulk document with 20 links (`linked`) or the same text without them: each link
 * (`[text](../fN/doc-M.md)`, `[[doc-M]]` or `kb://…`) written as plain words of the same length.
 */
function bodyOf(run, i, linked) {
  const text = bulkBody(i).split(' ');
  for (let l = 0; l < 20; l++) {
    const at = Math.floor(((l + 1) * text.length) / 21);
    const target = (i * 31 + l * 97) % BULK;
    const link =
      l % 3 === 0
        ? `[see doc ${target}](../f${target % 50}/doc-${target}.md)`
        : l % 3 === 1
          ? `[[doc-${target}]]`
          : `kb://bench-links/${run}/f${target % 50}/doc-${target}.md`;
    text[at] = linked ? link : link.replace(/[[\]()]/g, ' ').replace('kb://', 'kb:  ');
  }
  return text.join(' ');
}

/**
 * The bulk ratio, `RATIO_RUNS` times in a row (each its own documents): the median is the
 * row's ratio. Runs on one machine differ by some ±0.05, as much as a change to be judged.
 */
async function bulkRatio(baseUrl, say) {
  const runs = [];
  for (let n = 0; n < RATIO_RUNS; n++) {
    const run = `${Date.now().toString(36)}-${n}`;
    const seconds = await bulkSeconds(baseUrl, run);
    const rate = (kind) => round(BULK / seconds[kind]);
    const ratio = round(seconds.linked / seconds.plain);
    say(
      `bulk: ${BULK} documents with 20 links each at ${rate('linked')}/s, the same without links at ${rate('plain')}/s: ${ratio}× (target ≤ ${TARGETS.ratio})`,
    );
    runs.push({ ratio, linked: rate('linked'), plain: rate('plain') });
  }
  const median = [...runs].sort((a, b) => a.ratio - b.ratio)[Math.floor(runs.length / 2)];
  if (runs.length > 1) {
    say(
      `bulk: median of ${runs.length} runs ${median.ratio}× (${runs.map((r) => r.ratio).join(', ')})`,
    );
  }
  return [
    {
      scenario: `bulk create of documents with 20 links each (${PER_REQUEST} a request, 2 at a time; median of ${runs.length} runs)`,
      requests: BULK * runs.length,
      rps: median.linked,
      compared: `${median.linked} documents/s; without links ${median.plain}/s; ${median.ratio}× the time (runs: ${runs.map((r) => `${r.ratio}×`).join(', ')}; target ≤ ${TARGETS.ratio})`,
      ratio: median.ratio,
      target_ratio: TARGETS.ratio,
    },
  ];
}

/** One run of the ratio: `BULK` documents of each kind, written in alternating rounds. */
async function bulkSeconds(baseUrl, run) {
  const seconds = { linked: 0, plain: 0 };
  const requests = BULK / PER_REQUEST;
  // Rounds of two requests of one kind at a time: ABBA, so that drift meets both kinds.
  for (let r = 0; r < requests; r += 2) {
    const order = (r / 2) % 2 === 0 ? ['linked', 'plain'] : ['plain', 'linked'];
    for (const kind of order) {
      const t0 = performance.now();
      await Promise.all(
        [r, r + 1].map(async (k) => {
          const items = Array.from({ length: PER_REQUEST }, (_, j) => {
            const i = k * PER_REQUEST + j;
            return {
              op: 'create',
              document_id: `bench-links/${run}/${kind}/f${i % 50}/doc-${i}.md`,
              body: bodyOf(run, i, kind === 'linked'),
            };
          });
          const answer = await fetch(`${baseUrl}/documents/bulk`, {
            method: 'POST',
            headers: { ...HEADERS, 'Content-Type': 'application/json' },
            body: JSON.stringify({ items }),
          });
          const result = await answer.json();
          if (!answer.ok || result.failed > 0) {
            throw new Error(`links: a bulk write failed: ${JSON.stringify(result).slice(0, 300)}`);
          }
        }),
      );
      seconds[kind] += (performance.now() - t0) / 1000;
    }
  }
  return seconds;
}

/** Writes `count` documents linking to `target` (three ways), 20 links each, through the bulk route. */
async function writeLinking(baseUrl, folder, target, count) {
  const name = target.slice(target.lastIndexOf('/') + 1, -3);
  for (let start = 0; start < count; start += PER_REQUEST) {
    const items = Array.from({ length: Math.min(PER_REQUEST, count - start) }, (_, j) => {
      const i = start + j;
      const to =
        i % 3 === 0
          ? `[the hub](${'../'.repeat(folder.split('/').length + 1)}${target})`
          : i % 3 === 1
            ? `[[${name}]]`
            : `kb://${target}`;
      const others = Array.from({ length: 19 }, (_, l) => `[[note-${(i * 19 + l) % 5000}]]`).join(
        ' and ',
      );
      return {
        op: 'create',
        document_id: `${folder}/f${i % 20}/linking-${i}.md`,
        body: `# Linking ${i}\n\nThis runbook depends on ${to}; see also ${others}.\n`,
      };
    });
    const answer = await fetch(`${baseUrl}/documents/bulk`, {
      method: 'POST',
      headers: { ...HEADERS, 'Content-Type': 'application/json' },
      body: JSON.stringify({ items }),
    });
    const result = await answer.json();
    if (!answer.ok || result.failed > 0) {
      throw new Error(`links: a bulk write failed: ${JSON.stringify(result).slice(0, 300)}`);
    }
  }
}

async function backlinks(baseUrl, db, say) {
  const target = 'hub/services/postgres.md';
  await create(baseUrl, target, '# PostgreSQL\n\nThe primary database.');
  const t0 = performance.now();
  await writeLinking(baseUrl, 'linking', target, INBOUND);
  say(`${INBOUND} documents linking to ${target} written in ${round(performance.now() - t0)} ms`);
  await db.query('VACUUM ANALYZE');
  const path = `/documents/${target}/backlinks`;
  const first = await (await fetch(`${baseUrl}${path}`, { headers: HEADERS })).json();
  if (first.count !== INBOUND) {
    throw new Error(`links: ${target} has ${first.count} backlinks, expected ${INBOUND}`);
  }
  const result = await load({
    baseUrl,
    concurrency: 1,
    requests: 500,
    warmup: 50,
    request: () => ({ path, headers: HEADERS }),
  });
  say(
    `backlinks of a document with ${INBOUND} inbound links at ${SIZE} documents: first page p50 ${result.p50} ms, p95 ${result.p95} ms (target < ${TARGETS.backlinksP95})`,
  );
  return {
    scenario: `backlinks, first page, of a document with ${INBOUND} inbound links at ${SIZE} documents (concurrency 1)`,
    ...result,
    target_p95_ms: TARGETS.backlinksP95,
  };
}

async function move(baseUrl, db, say) {
  const target = 'hub/runbooks/backup.md';
  await create(
    baseUrl,
    target,
    '# Backup\n\nHow to back up. [The database](../services/postgres.md).',
  );
  await writeLinking(baseUrl, 'moving', target, MOVED_INBOUND);
  await db.query('VACUUM ANALYZE');
  const times = [];
  let from = target;
  for (const to of [
    'hub/archive/backup-2025.md',
    'hub/runbooks/backup.md',
    'hub/old/backup-v1.md',
  ]) {
    const t0 = performance.now();
    const answer = await fetch(`${baseUrl}/documents/${from}/move`, {
      method: 'POST',
      headers: { ...HEADERS, 'Content-Type': 'application/json' },
      body: JSON.stringify({ to }),
    });
    times.push(round(performance.now() - t0));
    if (!answer.ok) throw new Error(`links: the move failed: ${await answer.text()}`);
    const after = await (
      await fetch(`${baseUrl}/documents/${to}/backlinks?limit=1`, { headers: HEADERS })
    ).json();
    if (after.count !== MOVED_INBOUND) {
      throw new Error(`links: after the move, ${after.count} backlinks, expected ${MOVED_INBOUND}`);
    }
    from = to;
  }
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM kb_audit WHERE actor = 'system:links'`,
  );
  say(
    `moves of a document with ${MOVED_INBOUND} inbound links: ${times.join(', ')} ms (target < ${TARGETS.moveMs}); ${rows[0].n} revisions by system:links`,
  );
  return {
    scenario: `move of a document with ${MOVED_INBOUND} inbound links, every linking document written again`,
    p50: [...times].sort((a, b) => a - b)[1],
    max: Math.max(...times),
    requests: times.length,
    target_max_ms: TARGETS.moveMs,
    compared: `${times.join(', ')} ms`,
  };
}

async function create(baseUrl, id, body) {
  const answer = await fetch(`${baseUrl}/documents`, {
    method: 'POST',
    headers: { ...HEADERS, 'Content-Type': 'application/json' },
    body: JSON.stringify({ document_id: id, body }),
  });
  if (!answer.ok) throw new Error(`links: creating ${id}: ${await answer.text()}`);
}

/**
 * Grows the table from `from` to `to` documents by SQL (`bench/fNN/…`, no link in their
 * bodies), a third of them given a link row of five keys as if they linked elsewhere (so the
 * link index is of a million documents' size), then VACUUM ANALYZE.
 */
async function grow(db, from, to, say) {
  for (let at = from; at < to; at += BATCH) {
    const end = Math.min(to, at + BATCH);
    const t = performance.now();
    await db.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash, vector_status)
       SELECT format('bench/f%s/doc-%s.md', lpad((i % 50)::text, 2, '0'), lpad(i::text, 7, '0')),
              format('bench/f%s', lpad((i % 50)::text, 2, '0')), format('Notes %s', i),
              format(E'# Notes %s\\n\\nA page of notes, number %s, about nothing in particular.\\n', i, i),
              md5(i::text), 'skipped'
         FROM generate_series($1::int, $2::int - 1) AS i
        ORDER BY md5(i::text)`,
      [at, end],
    );
    await db.query(
      `INSERT INTO kb_links (source_id, keys, labels)
       SELECT format('bench/f%s/doc-%s.md', lpad((i % 50)::text, 2, '0'), lpad(i::text, 7, '0')),
              ARRAY(SELECT format('~note-%s', (i * 7 + k) % 50000) FROM generate_series(1, 5) AS k),
              ARRAY['a', 'b', 'c', 'd', 'e']
         FROM generate_series($1::int, $2::int - 1) AS i
        WHERE i % 3 = 0`,
      [at, end],
    );
    say(`inserted documents ${at}–${end} in ${round(performance.now() - t)} ms`);
  }
  const t = performance.now();
  await db.query('VACUUM ANALYZE');
  await until(
    async () => (await db.query(`SELECT count(*)::int AS n FROM kb_links_pending`)).rows[0].n === 0,
    60_000,
    { what: 'no link to read in the background' },
  );
  say(`table at ${to} documents; VACUUM ANALYZE in ${round(performance.now() - t)} ms`);
}
