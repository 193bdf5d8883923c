// The lexical side measured in-process, without a server (docs/search.md, "What else the lexical
// side was measured with"): every document of the benchmark's corpora chunked, recorded and
// indexed by the build's own code (dist/: markdown-chunker, lexical-record, LexicalIndex and the
// store's query weighting), then every query ranked as `mode=lexical` ranks it. A change of the
// analysis or of BM25 is measured in ten seconds instead of a server run per corpus; the
// figures are within 0.01 of the server's lexical rows (chunk boundaries and ties aside).
//
//   npm run build && node bench/retrieval/lexical-lab.mjs [options]
//
//   --second             also the second corpus (its rows are only ever reported, never tuned on)
//   --queries A          each query of half A with its nDCG@10 and first three results (grade:id)
//   --chunk-tokens N     chunks of N tokens at most (358: an embedding model's; default 400)
//   --k1 X, --b X        BM25's k1 and b (the build's `BM25_K1`, `BM25_B`; each term's best
//                        passage is still chosen with lexical-record.ts's own)
//   --fields T,H,B       BM25F's title, headings and body weights (`FIELD_WEIGHTS`)
//   --passage X          the best passage's weight λ (`PASSAGE_WEIGHT`)
//   --parts-weight W     a query compound's parts weigh W, the compound whole 1
//   --pair-bonus X       rerank the first 50: + X × the first score × the share of the query's
//                        adjacent word pairs the document holds adjacent (a proximity bonus)
//
// Tune on half A only (by the first byte of the SHA-1 of a query's id, as run-retrieval.mjs);
// half B, held-back.json and the second corpus are reported, never looked at query by query.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCorpus } from './corpus.mjs';
import { buildSecondCorpus } from './second-corpus.mjs';
import { scoreQuery, summarise } from './metrics.mjs';
import {
  HELD_BACK_FILE,
  MULTILINGUAL_FILE,
  QUERIES_FILE,
  SECOND_HELD_BACK_FILE,
  halfOf,
} from './run-retrieval.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const require = createRequire(import.meta.url);
const dist = (path) => require(join(root, 'dist', 'src', path));
const { chunkMarkdown, DEFAULT_CHUNKER_OPTIONS } = dist('vectors/work/markdown-chunker');
const { lexicalRecord } = dist('vectors/lexical/lexical-record');
const { LexicalIndex } = dist('vectors/lexical/lexical-index');
const { weighedTerms } = dist('vectors/lexical/lexical.store');
const { analyze, queryTerms } = dist('vectors/text/analyzer');
const bm25 = dist('vectors/lexical/bm25');

const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const number = (name) => (option(name) === undefined ? undefined : Number(option(name)));
// bm25.ts reads its constants from its exports at each call: set here, they rank this run.
if (option('--k1')) bm25.BM25_K1 = number('--k1');
if (option('--b')) bm25.BM25_B = number('--b');
if (option('--fields')) bm25.FIELD_WEIGHTS = option('--fields').split(',').map(Number);
if (option('--passage')) bm25.PASSAGE_WEIGHT = number('--passage');
const chunker = option('--chunk-tokens')
  ? {
      ...DEFAULT_CHUNKER_OPTIONS,
      targetTokens: Math.min(DEFAULT_CHUNKER_OPTIONS.targetTokens, number('--chunk-tokens')),
      maxTokens: number('--chunk-tokens'),
    }
  : DEFAULT_CHUNKER_OPTIONS;
const partsWeight = number('--parts-weight');
const pairBonus = number('--pair-bonus');

const texts = new Map();
function indexOf(corpus) {
  const index = new LexicalIndex();
  let revision = 1;
  for (const d of corpus) {
    const chunks = chunkMarkdown(d.body, d.title, chunker);
    const record = lexicalRecord(d.title, d.body, chunks);
    index.set({ ...record, documentId: d.document_id, revision: revision++, tags: [] });
    if (pairBonus !== undefined) texts.set(d.document_id, `${d.title}\n${d.body}`);
  }
  return index;
}

function rank(index, q) {
  let terms = weighedTerms(index, queryTerms(q.query));
  if (partsWeight !== undefined) {
    const parts = compoundParts(q.query);
    terms = terms.map((t) => (parts.has(t.term) ? { ...t, weight: t.weight * partsWeight } : t));
  }
  const filter = q.prefix ? { folder: q.prefix } : undefined;
  if (pairBonus === undefined) return index.search(terms, 10, filter).map((m) => m.documentId);
  const wanted = pairsOf(q.query);
  const found = index.search(terms, 50, filter);
  if (wanted.size === 0 || found.length === 0) return found.slice(0, 10).map((m) => m.documentId);
  const top = found[0].score;
  return found
    .map((m) => {
      const held = documentPairs(m.documentId);
      const hits = [...wanted].filter((pair) => held.has(pair)).length;
      return { id: m.documentId, score: m.score + pairBonus * top * (hits / wanted.size) };
    })
    .sort((x, y) => y.score - x.score)
    .slice(0, 10)
    .map((m) => m.id);
}

/** The word terms of the query's compounds (a token with a whole term beside its words). */
function compoundParts(query) {
  const parts = new Set();
  for (const token of query.split(/\s+/)) {
    const emitted = [];
    analyze(token, (term, stop, word) => emitted.push([term, word]));
    const words = emitted.filter(([, word]) => word);
    if (words.length > 1 && words.length < emitted.length)
      for (const [term] of words) parts.add(term);
  }
  return parts;
}

/** Adjacent pairs of a text's words that are not stop words, as stemmed terms. */
function pairsOf(text) {
  const words = [];
  analyze(text, (term, stop, word) => {
    if (word && !stop) words.push(term);
  });
  const pairs = new Set();
  for (let i = 0; i + 1 < words.length; i++) pairs.add(`${words[i]} ${words[i + 1]}`);
  return pairs;
}

const pairsKept = new Map();
function documentPairs(id) {
  let pairs = pairsKept.get(id);
  if (pairs === undefined) pairsKept.set(id, (pairs = pairsOf(texts.get(id))));
  return pairs;
}

function rows(index, queries, kindOf) {
  return queries.map((q) => {
    const ranked = rank(index, q);
    return { q, ranked, kind: kindOf(q), ...scoreQuery(ranked, q.relevant) };
  });
}

const log = (message) => process.stderr.write(`[lexical-lab] ${message}\n`);
const started = Date.now();
const multilingual = JSON.parse(readFileSync(MULTILINGUAL_FILE, 'utf8'));
const first = [...(await buildCorpus(root, { warn: log })), ...multilingual.documents];
const firstIndex = indexOf(first);
log(`first corpus: ${first.length} documents indexed in ${Date.now() - started} ms`);
const graded = JSON.parse(readFileSync(QUERIES_FILE, 'utf8')).map((q) => ({
  ...q,
  half: halfOf(q.id),
}));
const table = [];
const add = (set, results) => {
  for (const s of summarise(results)) table.push({ set, ...s });
};
const halfA = rows(
  firstIndex,
  graded.filter((q) => q.half === 'A'),
  (q) => q.kind,
);
add('A', halfA);
add(
  'B',
  rows(
    firstIndex,
    graded.filter((q) => q.half === 'B'),
    (q) => q.kind,
  ),
);
add(
  'held-back',
  rows(firstIndex, JSON.parse(readFileSync(HELD_BACK_FILE, 'utf8')), (q) => q.kind),
);
add(
  'multilingual',
  rows(firstIndex, multilingual.queries, () => 'multilingual'),
);
if (args.includes('--second')) {
  const second = await buildSecondCorpus(root, { warn: log });
  const queries = JSON.parse(readFileSync(SECOND_HELD_BACK_FILE, 'utf8')).queries;
  add(
    'second',
    rows(indexOf(second), queries, (q) => q.kind),
  );
}
for (const r of table) {
  process.stdout.write(
    `${`${r.set}: ${r.kind} (${r.queries})`.padEnd(32)} ${r.ndcg10.toFixed(4)}\n`,
  );
}
if (option('--queries') === 'A') {
  for (const r of halfA) {
    const top = r.ranked
      .slice(0, 3)
      .map((id) => `${r.q.relevant[id] ?? 0}:${id.split('/').slice(-2).join('/')}`);
    process.stdout.write(
      `${r.ndcg10.toFixed(3)} ${r.q.id} ${r.q.kind} ${JSON.stringify(r.q.query)} → ${top.join('  ')}\n`,
    );
  }
}
