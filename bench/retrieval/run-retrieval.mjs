// Retrieval quality benchmark: seeds the corpus of package docs (corpus.mjs) into a running
// server, waits for the vector pipeline, asks `GET /search` every query of queries.json in
// every mode, and scores the answers against the graded judgements (metrics.mjs), next to
// the baselines of maintained search libraries (baselines.mjs). Library:
// `runRetrieval(context)`; CLI:
//
//   node bench/retrieval/run-retrieval.mjs --base-url http://127.0.0.1:PORT --key KEY
//        [--modes hybrid,vector,lexical] [--out results.json] [--no-seed]
//   node bench/retrieval/run-retrieval.mjs --baselines-only        (no server: checks the
//        queries against the corpus and prints the baselines)
//
// The second corpus (second-corpus.mjs, ids under alt/) and its held-back queries
// (second-held-back.json) are measured too when asked: `--second-corpus` (or
// BENCH_SECOND_CORPUS=1), with `--baselines-only` the libraries alone. Its rows are modes
// named `second corpus: <mode>`. `--second-base-url URL` (with `--second-key`, else the same
// key) measures it on a server of its own, which should hold nothing else; without it the
// second corpus is seeded into the same server after the first corpus has been measured, and
// its queries are asked within alt/ (the knowledge base then holds both corpora, whose
// statistics mix).
// The linked corpus (linked-corpus.mjs, ids under linked/, fastify's documentation whose pages
// link to one another) and its queries (linked-queries.json) are measured the same way when
// asked: `--linked-corpus` (or BENCH_LINKED_CORPUS=1), `--linked-base-url URL` (with
// `--linked-key`) for a server of its own; rows `linked corpus: <mode>`, and by half of the
// set (`linkedHalfOf`: A tuned on, B only reported).
//
// The queries of queries.json are also reported by half, as the fusion weights were tuned on
// them (`halfOf`: A tuned on, B never looked at): rows `A overall`, `A keyword`, ... `B folder`
// beside the rows of the whole set, which they do not change.
//
// Longer than most files: one run of the three corpora through one server client, its seeding,
// waiting, modes, fusion sweep and tables sharing the judgements' shapes; what each corpus is
// (corpus.mjs, second-corpus.mjs, linked-corpus.mjs) and the libraries (baselines.mjs) live apart.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCorpus, corpusFingerprint } from './corpus.mjs';
import { SECOND_PREFIX, buildSecondCorpus, secondCorpusFingerprint } from './second-corpus.mjs';
import { LINKED_PREFIX, buildLinkedCorpus, linkedCorpusFingerprint } from './linked-corpus.mjs';
import { baselineRankers } from './baselines.mjs';
import { besideSides, scoreQuery, summarise } from './metrics.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
export const QUERIES_FILE = join(here, 'queries.json');
/** Notes in seven languages and their queries (see its `about`), seeded and asked too. */
export const MULTILINGUAL_FILE = join(here, 'multilingual.json');
/**
 * Queries written apart from queries.json, by another author, over the same corpus: never
 * looked at when tuning, reported as their own rows (`held-back …`, not in overall).
 */
export const HELD_BACK_FILE = join(here, 'held-back.json');
/**
 * Queries written apart, by another author, over the second corpus (see its `about`):
 * never looked at when tuning, reported as their own rows (`second corpus: …`).
 */
export const SECOND_HELD_BACK_FILE = join(here, 'second-held-back.json');
const KINDS = ['keyword', 'question', 'folder', 'multilingual'];
const SECOND_KINDS = ['keyword', 'question', 'folder', 'cli'];
/** Prefix of the rows (modes) of the second corpus. */
export const SECOND_MODE_PREFIX = 'second corpus: ';
/**
 * Queries written over the linked corpus (fastify's documentation, whose pages link to one
 * another: linked-corpus.mjs) to measure anchor text; reported by halves (`linkedHalfOf`).
 */
export const LINKED_QUERIES_FILE = join(here, 'linked-queries.json');
const LINKED_KINDS = ['keyword', 'question', 'folder'];
/** Prefix of the rows (modes) of the linked corpus. */
export const LINKED_MODE_PREFIX = 'linked corpus: ';

/** The two corpora measured beside the first, each on a server of its own or under its prefix. */
const OTHER_CORPORA = {
  second: {
    name: 'second corpus',
    build: buildSecondCorpus,
    fingerprint: secondCorpusFingerprint,
    file: SECOND_HELD_BACK_FILE,
    kinds: SECOND_KINDS,
    prefix: SECOND_PREFIX,
    modePrefix: SECOND_MODE_PREFIX,
    halves: false,
  },
  linked: {
    name: 'linked corpus',
    build: buildLinkedCorpus,
    fingerprint: linkedCorpusFingerprint,
    file: LINKED_QUERIES_FILE,
    kinds: LINKED_KINDS,
    prefix: LINKED_PREFIX,
    modePrefix: LINKED_MODE_PREFIX,
    halves: true,
  },
};
const SEED_CONCURRENCY = 8;
const SEARCH_LIMIT = 10;

/**
 * @param {object} context
 * @param {string} [context.baseUrl]  server to test; without it only BM25 runs
 * @param {Record<string, string>} [context.headers]  must carry an admin key (X-API-Key)
 * @param {string[]} [context.modes]  values of `mode` to try
 * @param {(message: string) => void} [context.log]  progress (stderr by default)
 * @param {(line: string) => void} [context.print]  the result table (stdout by default)
 * @param {boolean} [context.seed]  POST the corpus first (default true)
 * @param {number} [context.waitTimeoutMs]  how long to wait for embeddings (default 20 min)
 * @param {boolean | {baseUrl: string, headers?: Record<string, string>, seed?: boolean}}
 *   [context.secondCorpus]  also measure the second corpus (default: BENCH_SECOND_CORPUS=1):
 *   `true` on the same server, seeded under alt/ after the first corpus has been measured and
 *   asked within alt/; `{ baseUrl, headers }` on a server of its own; the baselines index it
 *   alone either way
 * @param {boolean | {baseUrl: string, headers?: Record<string, string>, seed?: boolean}}
 *   [context.linkedCorpus]  also measure the linked corpus (default: BENCH_LINKED_CORPUS=1),
 *   as the second corpus is measured (`true`: seeded under linked/ into the same server)
 * @param {boolean} [context.keepSides]  return each query's candidates of each side (`sides`:
 *   `first` and `second`, by query id, {@link SIDE_DEPTH} of each with their scores), for
 *   evaluating fusion rules offline (fusion-lab.mjs)
 */
export async function runRetrieval({
  baseUrl,
  headers = {},
  modes = ['hybrid', 'vector', 'lexical'],
  log = (message) => process.stderr.write(`[retrieval] ${message}\n`),
  print = (line) => process.stdout.write(`${line}\n`),
  seed = true,
  waitTimeoutMs = 20 * 60_000,
  secondCorpus = process.env.BENCH_SECOND_CORPUS === '1',
  linkedCorpus = process.env.BENCH_LINKED_CORPUS === '1',
  keepSides = false,
} = {}) {
  const packages = await buildCorpus(root, { warn: log });
  const multilingual = JSON.parse(readFileSync(MULTILINGUAL_FILE, 'utf8'));
  const corpus = [...packages, ...multilingual.documents];
  const fingerprint = corpusFingerprint(corpus);
  const queriesText = readFileSync(QUERIES_FILE, 'utf8');
  const queries = [
    ...JSON.parse(queriesText).map((q) => ({ ...q, half: halfOf(q.id) })),
    ...multilingual.queries.map((q) => ({ ...q, kind: 'multilingual' })),
    ...JSON.parse(readFileSync(HELD_BACK_FILE, 'utf8')).map((q) => ({ ...q, heldBack: true })),
  ];
  validateQueries(queries, corpus);
  log(
    `corpus: ${corpus.length} documents (${fingerprint.slice(0, 12)}); queries: ${queries.length} (${KINDS.map((k) => `${queries.filter((q) => q.kind === k).length} ${k}`).join(', ')})`,
  );

  const notes = {};
  const perQuery = [];
  let fusion;
  let sides;

  let indexing;
  if (baseUrl) {
    const http = client(baseUrl, headers);
    const seeding = Date.now();
    if (seed) await seedCorpus(http, corpus, log);
    const { readyAt } = await waitForVectors(http, log, waitTimeoutMs);
    indexing = { documents: corpus.length, seeded: seed, readyMs: readyAt - seeding };
    for (const mode of modes) {
      const { results, note } = await runMode(http, mode, queries, log);
      if (note) notes[mode] = note;
      perQuery.push(...results);
    }
    sides = await askSides(http, queries);
    fusion = await fusionSweep(sides, queries, log);
    // A mode whose answers equal another mode's on every query was most likely ignored.
    for (const mode of modes) {
      if (notes[mode]?.startsWith('unsupported')) continue;
      const same = modes.find(
        (other) =>
          other !== mode &&
          modes.indexOf(other) < modes.indexOf(mode) &&
          queries.every((q) => sameRanking(perQuery, q.id, mode, other)),
      );
      if (same)
        notes[mode] = `answers identical to mode ${same} on every query: mode probably ignored`;
    }
  }

  const rankers = await baselineRankers(corpus);
  for (const [name, rank] of Object.entries(rankers)) {
    for (const q of queries) perQuery.push(row(name, q, rank(q.query, q.prefix)));
  }

  const table = [];
  const modeNames = [...new Set(perQuery.map((r) => r.mode))];
  for (const mode of modeNames) {
    for (const s of summarise(perQuery.filter((r) => r.mode === mode))) {
      table.push({ mode, ...s, ...(notes[mode] ? { note: notes[mode] } : {}) });
    }
  }
  const other = async (spec, asked) =>
    asked
      ? await runOtherCorpus(spec, {
          http: baseUrl ? client(baseUrl, headers) : undefined,
          own:
            typeof asked === 'object'
              ? {
                  http: client(asked.baseUrl, asked.headers ?? headers),
                  seed: asked.seed ?? seed,
                }
              : undefined,
          modes,
          seed,
          log,
          waitTimeoutMs,
          keepSides,
        })
      : undefined;
  const second = await other(OTHER_CORPORA.second, secondCorpus);
  const linked = await other(OTHER_CORPORA.linked, linkedCorpus);
  for (const measured of [second, linked]) {
    if (!measured) continue;
    for (const mode of [...new Set(measured.perQuery.map((r) => r.mode))]) {
      for (const s of summarise(measured.perQuery.filter((r) => r.mode === mode))) {
        table.push({
          mode,
          ...s,
          ...(measured.notes[mode] ? { note: measured.notes[mode] } : {}),
        });
      }
    }
    Object.assign(notes, measured.notes);
  }
  table.push(
    ...besideSides(table),
    ...besideSides(table, SECOND_MODE_PREFIX),
    ...besideSides(table, LINKED_MODE_PREFIX),
  );
  printTable(table, notes, print);
  for (const line of notFirst(perQuery, queries)) print(line);
  if (fusion) printFusion(fusion, print);
  return {
    date: new Date().toISOString(),
    corpus: { documents: corpus.length, fingerprint },
    queries: {
      count: queries.length,
      sha256: createHash('sha256').update(queriesText).digest('hex'),
    },
    ...(indexing ? { indexing } : {}),
    ...(second ? { secondCorpus: second.summary } : {}),
    ...(linked ? { linkedCorpus: linked.summary } : {}),
    notes,
    table,
    ...(fusion ? { fusion } : {}),
    perQuery: [...perQuery, ...(second?.perQuery ?? []), ...(linked?.perQuery ?? [])],
    ...(keepSides && sides
      ? {
          sides: {
            first: Object.fromEntries(sides),
            second: second?.sides,
            ...(linked ? { linked: linked.sides } : {}),
          },
        }
      : {}),
  };
}

/**
 * Another corpus (OTHER_CORPORA: the second, the linked) and its queries: on a server of its
 * own (`own`), or seeded into the first corpus's server (`http`) under its prefix and asked
 * within it, or by the baselines alone (neither); the baselines index that corpus alone. Rows
 * are modes named `<corpus>: <mode>` (`second corpus: hybrid`), and for a set with halves
 * also `A overall`, `A keyword`, ... (`linkedHalfOf`).
 */
async function runOtherCorpus(spec, { http, own, modes, seed, log, waitTimeoutMs, keepSides }) {
  const corpus = await spec.build(root, { warn: log });
  const fingerprint = spec.fingerprint(corpus);
  const text = readFileSync(spec.file, 'utf8');
  const queries = JSON.parse(text).queries.map((q) =>
    spec.halves ? { ...q, half: linkedHalfOf(q.query) } : q,
  );
  validateQueries(queries, corpus, { kinds: spec.kinds, file: basename(spec.file) });
  const where = own ? 'own server' : http ? `same server, under ${spec.prefix}/` : 'baselines only';
  log(
    `${spec.name}: ${corpus.length} documents (${fingerprint.slice(0, 12)}); queries: ${queries.length} (${spec.kinds.map((k) => `${queries.filter((q) => q.kind === k).length} ${k}`).join(', ')}); ${where}`,
  );
  const named = (mode) => `${spec.modePrefix}${mode}`;
  const say = (message) => log(`${spec.name}: ${message}`);
  const notes = {};
  const perQuery = [];
  const server = own?.http ?? http;
  let indexing;
  let sides;
  if (server) {
    const seeding = Date.now();
    const seeded = own ? own.seed : seed;
    if (seeded) await seedCorpus(server, corpus, say);
    const { readyAt } = await waitForVectors(server, say, waitTimeoutMs);
    // On a shared server the first corpus was there already: its documents are not counted.
    if (own) indexing = { documents: corpus.length, seeded, readyMs: readyAt - seeding };
    // On a shared server every query stays within its prefix (a folder query within its folder).
    const asked = own
      ? queries
      : queries.map((q) => (q.prefix ? q : { ...q, prefix: `${spec.prefix}/` }));
    for (const mode of modes) {
      const { results, note } = await runMode(server, mode, asked, say);
      if (note) notes[named(mode)] = note;
      perQuery.push(...results.map((r) => ({ ...r, mode: named(mode) })));
    }
    if (keepSides) sides = Object.fromEntries(await askSides(server, asked));
  }
  const rankers = await baselineRankers(corpus);
  for (const [name, rank] of Object.entries(rankers)) {
    for (const q of queries) perQuery.push(row(named(name), q, rank(q.query, q.prefix)));
  }
  return {
    notes,
    perQuery,
    sides,
    summary: {
      documents: corpus.length,
      fingerprint,
      where,
      queries: { count: queries.length, sha256: createHash('sha256').update(text).digest('hex') },
      ...(indexing ? { indexing } : {}),
    },
  };
}

/** Candidates each side gives the fusion: the server's SEARCH_CANDIDATES, and its limit. */
const FUSION_DEPTHS = [20, 50];
const FUSION_WEIGHTS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
/** Candidates asked of each side alone, for the sweep and for fusion-lab.mjs. */
export const SIDE_DEPTH = Math.max(...FUSION_DEPTHS);

/**
 * Each query's candidates of each side alone (`mode=lexical`, `mode=vector`, SIDE_DEPTH of
 * each, the query's prefix kept): by query id, `{ lexical, vector }`, each a list of
 * `{ documentId, score }`, best first.
 */
async function askSides(http, queries) {
  const sides = new Map();
  for (const q of queries) {
    const side = async (mode) => {
      const params = new URLSearchParams({ query: q.query, limit: String(SIDE_DEPTH), mode });
      if (q.prefix) params.set('prefix', q.prefix);
      const answer = await http('GET', `/search?${params}`);
      return (answer.json?.results ?? []).map((r) => ({
        documentId: r.document_id,
        score: r.score,
      }));
    };
    sides.set(q.id, { lexical: await side('lexical'), vector: await side('vector') });
  }
  return sides;
}

/**
 * The fusion's choice, measured: each query's lexical and vector candidates (the server's,
 * FUSION_DEPTH of each) fused here by the product's own function (dist/) at every vector
 * weight of FUSION_WEIGHTS, and by weighted reciprocal rank (k 60) for comparison; nDCG@10
 * per kind of each. The server's own hybrid uses SEARCH_VECTOR_WEIGHT.
 */
async function fusionSweep(sides, queries, log) {
  let fuse;
  try {
    ({ fuse } = await import('../../dist/src/vectors/search/fusion.js'));
  } catch {
    log('fusion sweep skipped: no dist/ (npm run build)');
    return undefined;
  }
  const rrf = (lexical, vector, weight) => {
    const scores = new Map();
    const add = (list, w) =>
      list.forEach((c, rank) =>
        scores.set(c.documentId, (scores.get(c.documentId) ?? 0) + w / (61 + rank)),
      );
    add(lexical, 1);
    add(vector, weight);
    return [...scores.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([documentId]) => ({ documentId }));
  };
  // Each side's scores over its best (no minimum subtracted), then weighed as the product does.
  const byMax = (lexical, vector, weight) => {
    const scores = new Map();
    const add = (list, w) => {
      const top = Math.max(...list.map((c) => c.score), 1e-12);
      for (const c of list)
        scores.set(c.documentId, (scores.get(c.documentId) ?? 0) + (w * c.score) / top);
    };
    add(lexical, 1 - weight);
    add(vector, weight);
    return [...scores.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([documentId]) => ({ documentId }));
  };
  const fusions = FUSION_DEPTHS.flatMap((depth) => {
    const top = (combine) => (l, v) => combine(l.slice(0, depth), v.slice(0, depth));
    return [
      ...FUSION_WEIGHTS.map((w) => [
        `${depth}: min-max, vector ${w}`,
        top((l, v) => fuse(l, v, w)),
      ]),
      ...FUSION_WEIGHTS.map((w) => [
        `${depth}: over the best, vector ${w}`,
        top((l, v) => byMax(l, v, w)),
      ]),
      [`${depth}: reciprocal rank k 60, vector 1`, top((l, v) => rrf(l, v, 1))],
      [`${depth}: reciprocal rank k 60, vector 0.3`, top((l, v) => rrf(l, v, 0.3))],
    ];
  });
  const table = [];
  for (const [name, combine] of fusions) {
    const rows = queries.map((q) => {
      const { lexical, vector } = sides.get(q.id);
      const ranked = combine(lexical, vector)
        .slice(0, SEARCH_LIMIT)
        .map((c) => c.documentId);
      return row(name, q, ranked);
    });
    for (const s of summarise(rows)) table.push({ fusion: name, kind: s.kind, ndcg10: s.ndcg10 });
  }
  return table;
}

function printFusion(table, print) {
  const kinds = [...new Set(table.map((r) => r.kind))];
  print('');
  print(
    `fusion (candidates: kind, nDCG@10)${' '.repeat(4)}${kinds.map((k) => k.padEnd(14)).join('')}`,
  );
  for (const fusion of [...new Set(table.map((r) => r.fusion))]) {
    const cells = kinds.map((k) => {
      const v = table.find((r) => r.fusion === fusion && r.kind === k)?.ndcg10;
      return (v === undefined ? '' : v.toFixed(3)).padEnd(14);
    });
    print(`${fusion.padEnd(38)}${cells.join('')}`);
  }
}

/**
 * Throws unless every query is well formed and every judged id is in the corpus.
 * @param {{ kinds?: string[], file?: string }} [options]  the kinds allowed (default: the
 *   first set's) and the file named in the error
 */
export function validateQueries(queries, corpus, { kinds = KINDS, file = 'queries.json' } = {}) {
  const ids = new Set(corpus.map((d) => d.document_id));
  const seen = new Set();
  const problems = [];
  for (const q of queries) {
    const where = `query ${q.id ?? '(no id)'}`;
    if (typeof q.id !== 'string' || seen.has(q.id))
      problems.push(`${where}: missing or duplicate id`);
    seen.add(q.id);
    if (!kinds.includes(q.kind)) problems.push(`${where}: kind ${q.kind}`);
    if (typeof q.query !== 'string' || q.query.trim() === '')
      problems.push(`${where}: empty query`);
    if (q.kind === 'folder') {
      if (typeof q.prefix !== 'string' || !q.prefix.endsWith('/'))
        problems.push(`${where}: a folder query needs a prefix ending in "/"`);
    } else if (q.prefix !== undefined) problems.push(`${where}: only folder queries have a prefix`);
    const relevant = Object.entries(q.relevant ?? {});
    if (relevant.length === 0) problems.push(`${where}: no relevant document`);
    if (!relevant.some(([, g]) => g === 3)) problems.push(`${where}: no document of grade 3`);
    for (const [id, grade] of relevant) {
      if (![1, 2, 3].includes(grade)) problems.push(`${where}: grade ${grade} for ${id}`);
      if (!ids.has(id)) problems.push(`${where}: ${id} is not in the corpus`);
      if (q.prefix && !id.startsWith(q.prefix))
        problems.push(`${where}: ${id} is outside the prefix ${q.prefix}`);
    }
  }
  if (problems.length > 0) throw new Error(`${file} is invalid:\n  ${problems.join('\n  ')}`);
}

/**
 * The half of queries.json a query belongs to, as the fusion weights were tuned: `A` (tuned
 * on) or `B` (not looked at while tuning), by the first byte of the SHA-1 of its id. The
 * summary shows each half as rows `A overall`, `A keyword`, ..., `B overall`, ...
 */
export function halfOf(id) {
  return createHash('sha1').update(id).digest()[0] & 1 ? 'B' : 'A';
}

/**
 * The half of linked-queries.json a query belongs to: `A` (tuned on) or `B` (only reported),
 * by the first byte of the SHA-1 of its text.
 */
export function linkedHalfOf(query) {
  return createHash('sha1').update(query).digest()[0] & 1 ? 'B' : 'A';
}

/** Connection errors after which a request is sent again (a kept-alive socket the server closed). */
const RETRIED_SOCKET_ERRORS = ['UND_ERR_SOCKET', 'ECONNRESET'];

function client(baseUrl, headers) {
  const base = baseUrl.replace(/\/+$/, '');
  return async (method, path, body) => {
    for (let attempt = 0, resets = 0; ; attempt++) {
      let response;
      try {
        response = await fetch(`${base}${path}`, {
          method,
          headers: {
            ...headers,
            ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (error) {
        // The server closes sockets idle for its keep-alive timeout (5 s in Node) while the
        // baselines are computed; a request sent on one fails before reaching it.
        if (RETRIED_SOCKET_ERRORS.includes(error?.cause?.code) && resets++ < 3) continue;
        throw error;
      }
      const text = await response.text();
      if (response.status === 429 && attempt < 20) {
        const wait = Number(response.headers.get('retry-after') ?? 1);
        await sleep(Math.max(0.1, Number.isFinite(wait) ? wait : 1) * 1000);
        continue;
      }
      let json;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, json, text };
    }
  };
}

async function seedCorpus(http, corpus, log) {
  const started = Date.now();
  let created = 0;
  let existing = 0;
  let differing = 0;
  const failures = [];
  let next = 0;
  const worker = async () => {
    while (next < corpus.length) {
      const d = corpus[next++];
      const answer = await http('POST', '/documents', {
        document_id: d.document_id,
        title: d.title,
        body: d.body,
        tags: ['retrieval-bench'],
        metadata: d.source
          ? {
              licence: d.licence,
              package: d.source.package,
              version: d.source.version,
              file: d.source.file,
              licence_file: d.source.licence_file,
            }
          : {},
      });
      if (answer.status === 201 || answer.status === 200) created++;
      else if (answer.status === 409) {
        existing++;
        const current = await http('GET', `/documents/${encodeId(d.document_id)}`);
        if (current.json?.body !== d.body) differing++;
      } else failures.push(`${d.document_id}: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  log(
    `seeded in ${Date.now() - started} ms: ${created} created, ${existing} already there${differing ? ` (${differing} with a different body: results may not match this corpus)` : ''}`,
  );
  if (failures.length > 0)
    throw new Error(
      `seeding failed for ${failures.length} documents:\n  ${failures.slice(0, 10).join('\n  ')}`,
    );
}

/**
 * Waits until `GET /admin/vectors/status` reports nothing pending or leased and no anchor
 * field still to read. Resolves to `readyAt`, the time (`Date.now()`) it first saw all three
 * at 0: the pipeline's end, before any wait for the semantic model.
 */
async function waitForVectors(http, log, timeoutMs) {
  const started = Date.now();
  let lastLog = 0;
  let readyAt;
  for (;;) {
    const status = await http('GET', '/admin/vectors/status');
    if (status.status === 404) {
      log('no /admin/vectors/status: not waiting for embeddings');
      return { readyAt: Date.now() };
    }
    if (status.status !== 200 || typeof status.json?.counts !== 'object')
      throw new Error(`GET /admin/vectors/status: ${status.status} ${status.text.slice(0, 200)}`);
    const { counts, leased = 0, lexical } = status.json;
    const pending = Number(counts.pending ?? 0);
    // With the local embedder the vector side ranks by a model learnt from the documents
    // (LOCAL_SEMANTIC): it must have been learnt from all of them but a hundredth (the
    // server learns again once quiet after such a change: semantic-training.ts).
    const model = lexical?.semantic_model;
    const learning =
      status.json.embedder?.provider === 'local' &&
      lexical?.documents >= 50 &&
      (model === null || model === undefined || model.documents < lexical.documents * 0.99);
    // The anchor fields (the texts of the links to each document) follow the records.
    const anchorsDue = Number(status.json.anchor_fields?.due ?? 0);
    const done = pending === 0 && Number(leased) === 0 && anchorsDue === 0;
    if (done) readyAt ??= Date.now();
    if (done && !(learning && Date.now() - started < 120_000)) {
      if (learning) log('warning: the semantic model was not learnt from the whole corpus');
      log(
        `vectors ready after ${Date.now() - started} ms (${Object.entries(counts)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')})`,
      );
      if (Number(counts.error ?? 0) > 0) log(`warning: ${counts.error} documents failed to embed`);
      return { readyAt };
    }
    if (Date.now() - started > timeoutMs)
      throw new Error(`embeddings still pending after ${timeoutMs} ms: ${JSON.stringify(counts)}`);
    if (Date.now() - lastLog > 10_000) {
      log(
        `waiting for embeddings: ${pending} pending, ${leased} leased${anchorsDue > 0 ? `, ${anchorsDue} anchor fields` : ''}${learning ? ', the semantic model' : ''}`,
      );
      lastLog = Date.now();
    }
    await sleep(250);
  }
}

async function runMode(http, mode, queries, log) {
  let withMode = true;
  let note;
  const results = [];
  const started = Date.now();
  for (const q of queries) {
    let answer = await http('GET', searchPath(q, withMode ? mode : undefined));
    if (withMode && answer.status === 400 && /mode/i.test(answer.text)) {
      withMode = false;
      note = `unsupported: the server refused mode=${mode} (${answer.status} ${errorMessage(answer)}); ran without the mode parameter`;
      log(`mode ${mode}: ${note}`);
      answer = await http('GET', searchPath(q, undefined));
    }
    if (answer.status !== 200 || !Array.isArray(answer.json?.results)) {
      results.push({ ...row(mode, q, []), error: `${answer.status} ${errorMessage(answer)}` });
      continue;
    }
    results.push({
      ...row(
        mode,
        q,
        answer.json.results.map((r) => r.document_id),
      ),
      // The server's scores, to tell a tie from a different ranking (store-comparison.mjs).
      scores: answer.json.results.map((r) => r.score),
    });
  }
  const errors = results.filter((r) => r.error).length;
  log(
    `mode ${mode}: ${queries.length} queries in ${Date.now() - started} ms${errors ? `, ${errors} errors (first: ${results.find((r) => r.error).error})` : ''}`,
  );
  if (errors > 0) note = [note, `${errors} queries failed`].filter(Boolean).join('; ');
  return { results, note };
}

function searchPath(q, mode) {
  const params = new URLSearchParams({ query: q.query, limit: String(SEARCH_LIMIT) });
  if (mode !== undefined) params.set('mode', mode);
  if (q.prefix) params.set('prefix', q.prefix);
  return `/search?${params}`;
}

function row(mode, q, ranked) {
  if (q.heldBack) {
    return {
      ...row(mode, { ...q, heldBack: false, common: false }, ranked),
      kind: `held-back ${q.kind}`,
      also: ['held-back', ...(q.common ? ['held-back common'] : [])],
      separate: true,
    };
  }
  const also = [
    ...(q.common ? ['common'] : []),
    ...(q.half ? [`${q.half} overall`, `${q.half} ${q.kind}`] : []),
  ];
  return {
    mode,
    id: q.id,
    kind: q.kind,
    ...(also.length > 0 ? { also } : {}),
    ...(q.kind === 'multilingual' ? { separate: true } : {}),
    query: q.query,
    ...(q.prefix ? { prefix: q.prefix } : {}),
    ...scoreQuery(ranked, q.relevant),
    ranked,
  };
}

function sameRanking(perQuery, id, a, b) {
  const x = perQuery.find((r) => r.mode === a && r.id === id);
  const y = perQuery.find((r) => r.mode === b && r.id === id);
  return x && y && !x.error && !y.error && x.ranked.join('\n') === y.ranked.join('\n');
}

function errorMessage(answer) {
  return (answer.json?.error?.message ?? answer.text ?? '').slice(0, 160);
}

function encodeId(id) {
  return id.split('/').map(encodeURIComponent).join('/');
}

/** Per mode, the multilingual queries whose target is not the first hit (the set's target). */
function notFirst(perQuery, queries) {
  const targets = new Map(
    queries
      .filter((q) => q.kind === 'multilingual')
      .map((q) => [q.id, Object.keys(q.relevant).find((id) => q.relevant[id] === 3)]),
  );
  const modes = [...new Set(perQuery.map((r) => r.mode))];
  return modes.map((mode) => {
    const missed = perQuery
      .filter((r) => r.mode === mode && targets.has(r.id) && r.ranked?.[0] !== targets.get(r.id))
      .map((r) => `${r.id} ${r.query}`);
    return `multilingual, ${mode}: ${targets.size - missed.length}/${targets.size} first${missed.length ? ` (not first: ${missed.join('; ')})` : ''}`;
  });
}

function printTable(table, notes, print) {
  const columns = ['mode', 'kind', 'queries', 'ndcg10', 'recall5', 'mrr10'];
  const cell = (r, c) =>
    r[c] === undefined
      ? ''
      : typeof r[c] === 'number' && !Number.isInteger(r[c])
        ? r[c].toFixed(3)
        : String(r[c]);
  const widths = columns.map((c) => Math.max(c.length, ...table.map((r) => cell(r, c).length)));
  const line = (values) => values.map((v, i) => v.padEnd(widths[i])).join('  ');
  print(line(columns));
  for (const r of table) print(line(columns.map((c) => cell(r, c))));
  for (const [mode, note] of Object.entries(notes)) print(`note: ${mode}: ${note}`);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const option = (name) => {
    const i = args.indexOf(name);
    return i === -1 ? undefined : args[i + 1];
  };
  const baselinesOnly = args.includes('--baselines-only');
  const baseUrl = option('--base-url');
  const secondBaseUrl = option('--second-base-url');
  const linkedBaseUrl = option('--linked-base-url');
  if (!baselinesOnly && !baseUrl) {
    console.error(
      'usage: node bench/retrieval/run-retrieval.mjs --base-url http://127.0.0.1:PORT --key KEY [--modes hybrid,vector,lexical] [--out file.json] [--no-seed]\n' +
        '         [--second-corpus | --second-base-url http://127.0.0.1:PORT2 [--second-key KEY2]]\n' +
        '         [--linked-corpus | --linked-base-url http://127.0.0.1:PORT3 [--linked-key KEY3]]\n' +
        '       node bench/retrieval/run-retrieval.mjs --baselines-only [--second-corpus] [--linked-corpus]\n' +
        '       (BENCH_SECOND_CORPUS=1 stands for --second-corpus, BENCH_LINKED_CORPUS=1 for --linked-corpus)',
    );
    process.exit(2);
  }
  const key = option('--key') ?? process.env.API_KEY;
  const secondKey = option('--second-key') ?? key;
  const linkedKey = option('--linked-key') ?? key;
  const result = await runRetrieval({
    baseUrl: baselinesOnly ? undefined : baseUrl,
    headers: key ? { 'X-API-Key': key } : {},
    modes: option('--modes')?.split(',').filter(Boolean),
    seed: !args.includes('--no-seed'),
    secondCorpus:
      secondBaseUrl && !baselinesOnly
        ? { baseUrl: secondBaseUrl, headers: secondKey ? { 'X-API-Key': secondKey } : {} }
        : args.includes('--second-corpus') ||
          Boolean(secondBaseUrl) ||
          process.env.BENCH_SECOND_CORPUS === '1',
    linkedCorpus:
      linkedBaseUrl && !baselinesOnly
        ? { baseUrl: linkedBaseUrl, headers: linkedKey ? { 'X-API-Key': linkedKey } : {} }
        : args.includes('--linked-corpus') ||
          Boolean(linkedBaseUrl) ||
          process.env.BENCH_LINKED_CORPUS === '1',
  });
  const out = option('--out');
  if (out) {
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    console.error(`[retrieval] written to ${out}`);
  }
}
