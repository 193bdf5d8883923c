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
//   --prf D,T,W[,S]      pseudo-relevance feedback (RM3): the first D documents' best T terms
//                        held by at most S of the documents (0.1) join the query at weight W
//   --pair-bonus X       rerank the first 50: + X × the first score × the share of the query's
//                        adjacent word pairs the document holds adjacent (a proximity bonus)
//
// Tune on half A only (by the first byte of the SHA-1 of a query's id, as run-retrieval.mjs);
// half B, held-back.json and the second corpus are reported, never looked at query by query.
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
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

const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const number = (name) => (option(name) === undefined ? undefined : Number(option(name)));
tuneBm25({
  K1: option('--k1'),
  B: option('--b'),
  WEIGHTS: option('--fields') && `[${option('--fields')}]`,
  LAMBDA: option('--passage'),
});

/**
 * bm25.ts keeps its constants as the module's own (its search reads them as locals): a run
 * that sets them loads the compiled module once with them written in, before anything
 * requires it, and stops when the build no longer declares one as this expects.
 */
function tuneBm25(values) {
  const given = Object.entries(values).filter(([, value]) => value !== undefined);
  if (given.length === 0) return;
  const file = require.resolve(join(root, 'dist', 'src', 'vectors/lexical/bm25'));
  let source = readFileSync(file, 'utf8');
  for (const [name, value] of given) {
    const parts = value.replace(/^\[|\]$/g, '').split(',');
    if (
      parts.length !== (name === 'WEIGHTS' ? 3 : 1) ||
      !parts.every((part) => part.trim() !== '' && Number.isFinite(Number(part)))
    ) {
      throw new Error(
        `${name}: ${value} is not ${name === 'WEIGHTS' ? 'three numbers' : 'a number'}`,
      );
    }
    const declared = new RegExp(`const ${name} = [^;]+;`);
    if (!declared.test(source)) throw new Error(`${file} declares no \`const ${name} = …;\``);
    source = source.replace(declared, `const ${name} = ${value};`);
  }
  const tuned = new Module(file, null);
  tuned.filename = file;
  tuned.paths = Module._nodeModulePaths(dirname(file));
  tuned._compile(source, file);
  tuned.loaded = true;
  require.cache[file] = tuned;
}
const { chunkMarkdown, DEFAULT_CHUNKER_OPTIONS } = dist('vectors/work/markdown-chunker');
const { lexicalRecord } = dist('vectors/lexical/lexical-record');
const { LexicalIndex } = dist('vectors/lexical/lexical-index');
const { weighedTerms } = dist('vectors/lexical/lexical.store');
const { analyze, queryTerms } = dist('vectors/text/analyzer');
const chunker = option('--chunk-tokens')
  ? {
      ...DEFAULT_CHUNKER_OPTIONS,
      targetTokens: Math.min(DEFAULT_CHUNKER_OPTIONS.targetTokens, number('--chunk-tokens')),
      maxTokens: number('--chunk-tokens'),
    }
  : DEFAULT_CHUNKER_OPTIONS;
const partsWeight = number('--parts-weight');
const pairBonus = number('--pair-bonus');
const [feedbackDocuments, feedbackTerms, feedbackWeight, feedbackShare = 0.1] = (
  option('--prf') ?? ''
)
  .split(',')
  .filter(Boolean)
  .map(Number);
const stopWords = new Set(require('stopword').eng);

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
  if (feedbackDocuments) terms = withFeedback(index, terms, filter);
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

/**
 * Pseudo-relevance feedback as RM3 (Lavrenko and Croft; Anserini's BM25+RM3): the first
 * pass's top documents, each weighed by its share of their scores, give each of their terms
 * Σ share × tf / length; the best terms that are not the query's, not stop words and held by
 * at most `feedbackShare` of the documents join the query at `feedbackWeight` × their weight
 * against the best one's.
 */
function withFeedback(index, terms, filter) {
  const found = index.search(terms, feedbackDocuments, filter);
  if (found.length === 0) return terms;
  const total = found.reduce((sum, m) => sum + m.score, 0);
  const asked = new Set(terms.map((t) => t.term));
  const limit = feedbackShare * index.documentCount;
  const weights = new Map();
  for (const m of found) {
    const counts = index.termCountsOf(m.documentId);
    let length = 0;
    for (const count of counts.values()) length += count;
    for (const [term, count] of counts) {
      if (asked.has(term) || stopWords.has(term) || index.frequency(term) > limit) continue;
      weights.set(term, (weights.get(term) ?? 0) + ((m.score / total) * count) / length);
    }
  }
  const best = [...weights].sort((a, b) => b[1] - a[1]).slice(0, feedbackTerms);
  if (best.length === 0) return terms;
  const top = best[0][1];
  return [
    ...terms,
    ...best.map(([term, weight]) => ({ term, weight: (feedbackWeight * weight) / top })),
  ];
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
