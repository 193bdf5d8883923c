// Anchor text as a field of the lexical index, measured offline before it is built
// (docs/search.md, "Anchor text"): the texts of the links pointing at a document, indexed as a
// fourth field of its lexical record beside the title, the headings and the body.
//
//   node bench/retrieval/anchor-lab.mjs DUMP... [--weights 0.5,1,2] [--show 'all 8']
//   (ANCHOR_CAP=3: each term's count in the field capped, as a posting's bits would.)
//
// (`--show VARIANT`: each query whose nDCG@10 that variant changes, and by how much.)
// DUMP: a dump of fusion-lab.mjs (`dump`: every corpus's queries asked of real servers, each
// side's 50 candidates kept). For each corpus the lexical side is computed again here, from
// the server's own code (dist/: the chunker, the lexical records, the query's weighted terms,
// BM25F's term share and idf), once without the field and once with it, and the hybrid
// answers are the server's own fusion (fusion-rules.mjs `productRule`) of that lexical side
// with the vector side the server gave. The run first checks that the lexical side computed
// without the field is the server's (the same 50 ids in the same order, the same scores, on
// every query): the difference "with − without" is then the field's alone.
//
// The field: each link resolving to a document (the server's link rules, all documents
// readable, links to itself left out) adds its text (the link's label) to the target's
// anchor field; BM25F adds `weight · tf / (1 − b + b · length / mean length)` to the term's
// sum over the fields, the mean over every document (those without links count with length
// 0), a term in the anchor field alone makes the document hold the term (its df counts it).
// Two sources of links: `all` (every linking document: what an administrator reading
// everything would get) and `subtree` (only linking documents in the target's own folder or
// below it: what every reader allowed to read the target may read, the rule a shared index
// can keep).
//
// Weights are chosen on half A of the linked corpus's queries; half B, the first corpus's
// half B and held-back set and the second corpus are only reported.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCorpus } from './corpus.mjs';
import { statisticsOf } from './fusion-evaluate.mjs';
import { productRule } from './fusion-rules.mjs';
import { buildLinkedCorpus } from './linked-corpus.mjs';
import { ndcgAt } from './metrics.mjs';
import {
  HELD_BACK_FILE,
  LINKED_MODE_PREFIX,
  LINKED_QUERIES_FILE,
  MULTILINGUAL_FILE,
  QUERIES_FILE,
  SECOND_HELD_BACK_FILE,
  SECOND_MODE_PREFIX,
  halfOf,
  linkedHalfOf,
} from './run-retrieval.mjs';
import { buildSecondCorpus } from './second-corpus.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const dist = (path) => require(join(root, 'dist/src', path));
const { runWork } = dist('vectors/work/vector-work.js');
const { DEFAULT_CHUNKER_OPTIONS } = dist('vectors/work/markdown-chunker.js');
const { knownModel, chunkTokensFor } = dist('models/known-models.js');
const { LexicalIndex } = dist('vectors/lexical/lexical-index.js');
const { weighedTerms } = dist('vectors/lexical/lexical.store.js');
const { queryTerms, analyze } = dist('vectors/text/analyzer.js');
const { termShare, idf, BM25_K1, BM25_B, PASSAGE_WEIGHT, FIELD_WEIGHTS } =
  dist('vectors/lexical/bm25.js');
const { packPosting, bodyCount, headingsCount, passageCount, passageIndex } = dist(
  'vectors/lexical/posting-store.js',
);
const { extractLinks } = dist('documents/links/markdown-links.js');
const { targetOf, endsWithPath, twinOf, titleKey } = dist('documents/links/link-targets.js');
const { nearest } = dist('documents/links/link-resolution.js');

/** Candidates a side gives (run-retrieval.mjs SIDE_DEPTH). */
const SIDE_DEPTH = 50;

/** The id a link of `sourceId` resolves to among `ids` (all readable), or null. */
export function resolveLink(target, sourceId, ids, titles) {
  if (target.rule === 'id') {
    if (ids.has(target.id)) return target.id;
    return ids.has(twinOf(target.id)) ? twinOf(target.id) : null;
  }
  const byPath = [...ids].filter((id) => endsWithPath(id, target.suffix));
  if (byPath.length > 0) return nearest(sourceId, byPath);
  const byTitle = target.title === null ? [] : (titles.get(titleKey(target.title)) ?? []);
  return byTitle.length > 0 ? nearest(sourceId, byTitle) : null;
}

/** Per target id, its inbound links: `{ source, label }`. */
export function inboundLinks(corpus) {
  const ids = new Set(corpus.map((d) => d.document_id));
  const titles = new Map();
  for (const d of corpus) {
    const key = titleKey(d.title);
    titles.set(key, [...(titles.get(key) ?? []), d.document_id]);
  }
  const inbound = new Map();
  for (const d of corpus) {
    for (const link of extractLinks(d.body)) {
      const target = targetOf(link, d.document_id);
      if (target === null) continue;
      const id = resolveLink(target, d.document_id, ids, titles);
      if (id === null || id === d.document_id) continue;
      inbound.set(id, [...(inbound.get(id) ?? []), { source: d.document_id, label: link.label }]);
    }
  }
  return inbound;
}

const folderOf = (id) => id.slice(0, id.lastIndexOf('/') + 1);
/** Which linking documents a target's anchor field reads (`fileOf`: id → the file it came from). */
const SOURCES = {
  all: () => true,
  subtree: (source, target) => source.startsWith(folderOf(target)),
  // Links between sections of one file (a table of contents) left out: other pages' links only.
  'other files': (source, target, fileOf) => fileOf.get(source) !== fileOf.get(target),
};

/**
 * The corpus's lexical evidence as the server holds it: the product's index (for the query's
 * weighted terms and the check), and per document its record's postings, for scoring here.
 */
function lexicalOf(corpus, embedder) {
  const index = new LexicalIndex();
  const { records } = runWork({
    kind: 'prepare',
    documents: corpus.map((d) => ({ id: d.document_id, title: d.title, body: d.body })),
    chunker: chunkerFor(embedder),
  });
  const docs = corpus.map((d, i) => {
    const r = records[i];
    index.set({ ...r, documentId: d.document_id, revision: 1, tags: [] });
    const postings = new Map();
    r.terms.forEach((t, k) => postings.set(t, packPosting(r.fields[k], r.passages[k])));
    return { id: d.document_id, record: r, postings };
  });
  const n = docs.length;
  const sums = [0, 1, 2].map((f) => docs.reduce((s, d) => s + d.record.lengths[f], 0));
  const passages = docs.reduce((s, d) => s + d.record.passageLengths.length, 0);
  const passageSum = docs.reduce(
    (s, d) => s + d.record.passageLengths.reduce((a, b) => a + b, 0),
    0,
  );
  const averages = {
    title: Math.max(sums[0] / n, 1e-9),
    headings: Math.max(sums[1] / n, 1e-9),
    body: Math.max(sums[2] / n, 1e-9),
    passage: Math.max(passageSum / Math.max(passages, 1), 1e-9),
  };
  return { index, docs, averages };
}

/** The chunker options the server runs with this embedder (vector-batch.processor.ts). */
function chunkerFor(embedder) {
  const model = { bge: 'bge-small-en-v1.5', e5: 'e5-small-v2' }[embedder];
  if (model === undefined) return DEFAULT_CHUNKER_OPTIONS;
  const tokens = chunkTokensFor(knownModel(model));
  return {
    ...DEFAULT_CHUNKER_OPTIONS,
    targetTokens: Math.min(DEFAULT_CHUNKER_OPTIONS.targetTokens, tokens),
    maxTokens: tokens,
  };
}

/** Per document, its anchor field: term counts and length, from the links `admit` keeps. */
function anchorFields(docs, inbound, admit, fileOf) {
  return docs.map((d) => {
    const tf = new Map();
    let length = 0;
    for (const { source, label } of inbound.get(d.id) ?? []) {
      if (!admit(source, d.id, fileOf)) continue;
      analyze(label, (term, stop, word) => {
        tf.set(term, (tf.get(term) ?? 0) + 1);
        if (word && !stop) length++;
      });
    }
    const cap = Number(process.env.ANCHOR_CAP ?? Infinity);
    for (const [t, c] of tf) tf.set(t, Math.min(c, cap));
    return { tf, length };
  });
}

/**
 * The lexical side of `query` (within `prefix`): the best SIDE_DEPTH documents with their
 * scores, the server's formula with the anchor field at `weight` (0: the server's own).
 */
function lexicalSide(lex, anchors, weight, query, prefix) {
  const { docs, averages, index } = lex;
  const n = docs.length;
  const withField = weight > 0;
  const anchorMean = withField ? Math.max(anchors.reduce((s, a) => s + a.length, 0) / n, 1e-9) : 1;
  const df = (term) =>
    withField
      ? docs.reduce((c, d, i) => c + (d.postings.has(term) || anchors[i].tf.has(term) ? 1 : 0), 0)
      : index.frequency(term);
  // The query's weighted terms as the server picks them, df counting the anchor field too.
  const view = { frequency: df, termsContaining: (t, k) => index.termsContaining(t, k) };
  const terms = weighedTerms(view, queryTerms(query)).map(({ term, weight: qw }) => ({
    term,
    w: idf(n, df(term)) * qw,
  }));
  const [wt, wh, wb] = FIELD_WEIGHTS;
  const scored = [];
  docs.forEach((d, i) => {
    if (prefix && !d.id.startsWith(prefix)) return;
    let score = 0;
    let held = false;
    for (const { term, w } of terms) {
      const packed = d.postings.get(term);
      const inAnchor = withField ? (anchors[i].tf.get(term) ?? 0) : 0;
      if (packed === undefined && inAnchor === 0) continue;
      held = true;
      const plen = packed === undefined ? 0 : (d.record.passageLengths[passageIndex(packed)] ?? 0);
      if (!withField) {
        score += w * termShare(packed, d.record.lengths, 0, plen, averages);
        continue;
      }
      const p = packed ?? 0;
      const L = d.record.lengths;
      const norm = (len, avg) => 1 - BM25_B + (BM25_B * len) / avg;
      const x =
        (wt * (p & 0xf)) / norm(L[0], averages.title) +
        (wh * headingsCount(p)) / norm(L[1], averages.headings) +
        (wb * bodyCount(p)) / norm(L[2], averages.body) +
        (weight * inAnchor) / norm(anchors[i].length, anchorMean);
      const count = passageCount(p);
      const inPassage =
        count === 0
          ? 0
          : (count * (BM25_K1 + 1)) /
            (count + BM25_K1 * (1 - BM25_B + (BM25_B * plen) / averages.passage));
      score += w * ((x * (BM25_K1 + 1)) / (BM25_K1 + x) + PASSAGE_WEIGHT * inPassage);
    }
    if (held) scored.push({ documentId: d.id, score: Math.round(score * 1e9) / 1e9 });
  });
  scored.sort((a, b) =>
    a.score !== b.score ? b.score - a.score : a.documentId < b.documentId ? -1 : 1,
  );
  return scored.slice(0, SIDE_DEPTH);
}

/** The corpora of a dump, each with its queries (set: the half or set they are reported in). */
async function corporaOf(dump) {
  const read = (file) => JSON.parse(readFileSync(file, 'utf8'));
  const quiet = { warn: () => undefined };
  const multilingual = read(MULTILINGUAL_FILE);
  return [
    {
      name: 'first',
      modePrefix: '',
      corpus: [...(await buildCorpus(root, quiet)), ...multilingual.documents],
      queries: [
        ...read(QUERIES_FILE).map((q) => ({ ...q, set: halfOf(q.id) })),
        ...read(HELD_BACK_FILE).map((q) => ({ ...q, set: 'held-back' })),
      ],
      sides: dump.sides?.first,
    },
    {
      name: 'second',
      modePrefix: SECOND_MODE_PREFIX,
      corpus: await buildSecondCorpus(root, quiet),
      queries: read(SECOND_HELD_BACK_FILE).queries.map((q) => ({ ...q, set: 'all' })),
      sides: dump.sides?.second,
    },
    {
      name: 'linked',
      modePrefix: LINKED_MODE_PREFIX,
      corpus: await buildLinkedCorpus(root, quiet),
      queries: read(LINKED_QUERIES_FILE).queries.map((q) => ({
        ...q,
        set: linkedHalfOf(q.query),
      })),
      sides: dump.sides?.linked,
    },
  ].filter((c) => c.sides);
}

const mean = (values) =>
  values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;

async function main(files, weights, show) {
  const { queryKind, readsAsKeywords } = dist('vectors/search/query-kind.js');
  const { termCounts } = dist('vectors/text/analyzer.js');
  for (const file of files) {
    const dump = JSON.parse(readFileSync(file, 'utf8'));
    const hybridOf = Object.values(await productRule(dump.embedder, root))[0];
    console.log(`\n== ${file}: ${dump.embedder}, ${dump.store} ==`);
    for (const c of await corporaOf(dump)) {
      const lex = lexicalOf(c.corpus, dump.embedder);
      // What the product's fusion reads besides the sides (its coverage: the query's terms, the
      // terms the lexical side's first document holds, the corpus's document frequencies).
      const without = statisticsOf(c.corpus, termCounts);
      const contextOf = (q, sides) => ({
        ...sides,
        queryKind: queryKind?.(q.query),
        keywords: readsAsKeywords(q.query),
        terms: [...queryTerms(q.query).terms.keys()],
        corpus: without,
      });
      const inbound = inboundLinks(c.corpus);
      const fileOf = new Map(
        c.corpus.map((d) => [
          d.document_id,
          d.source ? `${d.source.package}/${d.source.file}` : d.document_id,
        ]),
      );
      const links = [...inbound.values()].reduce((s, l) => s + l.length, 0);
      const kept = Object.fromEntries(
        Object.entries(SOURCES).map(([name, admit]) => [
          name,
          [...inbound].reduce(
            (s, [t, l]) => s + l.filter((x) => admit(x.source, t, fileOf)).length,
            0,
          ),
        ]),
      );
      console.log(
        `${c.name} corpus: ${c.corpus.length} documents, ${links} links to ${inbound.size} of them ` +
          `(the subtree rule keeps ${kept.subtree}, other files' ${kept['other files']}); ${c.queries.length} queries`,
      );
      // The check: without the field, the lexical side is the server's.
      let same = 0;
      let asked = 0;
      for (const q of c.queries) {
        const served = c.sides[q.id]?.lexical;
        if (!served) continue;
        asked++;
        const mine = lexicalSide(lex, [], 0, q.query, q.prefix);
        if (
          mine.length === served.length &&
          mine.every(
            (m, i) =>
              m.documentId === served[i].documentId &&
              Math.abs(m.score - served[i].score) <= 1e-6 * Math.max(1, m.score),
          )
        )
          same++;
      }
      // And the server's hybrid answers from its own sides, by the product's fusion.
      const served = new Map(
        dump.perQuery
          .filter((r) => r.mode === `${c.modePrefix}hybrid`)
          .map((r) => [r.id, r.ranked ?? []]),
      );
      let fused = 0;
      for (const q of c.queries) {
        const sides = c.sides[q.id];
        if (!sides || !served.has(q.id)) continue;
        const context = contextOf(q, sides);
        if (hybridOf(context).slice(0, 10).join('\n') === served.get(q.id).slice(0, 10).join('\n'))
          fused++;
      }
      console.log(
        `  check: the server's lexical side reproduced on ${same} of ${asked} queries, its hybrid top 10 on ${fused}`,
      );
      const variants = [['without', 'all', 0]];
      for (const source of Object.keys(SOURCES))
        for (const w of weights) variants.push([`${source} ${w}`, source, w]);
      const sets = [...new Set(c.queries.map((q) => q.set))];
      const kinds = [...new Set(c.queries.map((q) => q.kind))];
      const header = sets.flatMap((s) => [...kinds, 'overall'].map((k) => `${s}:${k.slice(0, 4)}`));
      console.log(`  ${'variant'.padEnd(22)} ${header.map((h) => h.padStart(10)).join('')}`);
      const before = new Map();
      for (const [name, source, w] of variants) {
        const anchors = anchorFields(lex.docs, inbound, SOURCES[source], fileOf);
        const rows = { lexical: [], hybrid: [] };
        const changed = { lexical: 0, hybrid: 0 };
        for (const q of c.queries) {
          const vector = c.sides[q.id]?.vector;
          if (!vector) continue;
          const lexical = lexicalSide(lex, anchors, w, q.query, q.prefix);
          const context = contextOf(q, { lexical, vector });
          const hybrid = hybridOf(context);
          // Queries whose top 10 the field changed, against the run without it.
          const tops = {
            lexical: lexical
              .slice(0, 10)
              .map((m) => m.documentId)
              .join('\n'),
            hybrid: hybrid.slice(0, 10).join('\n'),
          };
          for (const mode of ['lexical', 'hybrid']) {
            const key = `${mode}\0${q.id}`;
            if (w === 0) before.set(key, tops[mode]);
            else if (before.get(key) !== tops[mode]) changed[mode]++;
          }
          if (show === name)
            for (const [mode, ids] of [
              ['lexical', lexical.map((m) => m.documentId)],
              ['hybrid', hybrid],
            ]) {
              const v = ndcgAt(10, ids.slice(0, 10), q.relevant);
              const was = before.get(`${mode}\0${q.id}\0ndcg`);
              if (was !== undefined && Math.abs(v - was) > 1e-9)
                console.log(
                  `    ${c.name} ${q.set} ${mode} ${q.id} ${(v - was >= 0 ? '+' : '') + (v - was).toFixed(3)} ${q.query}`,
                );
            }
          if (w === 0) {
            before.set(
              `lexical\0${q.id}\0ndcg`,
              ndcgAt(
                10,
                lexical.slice(0, 10).map((m) => m.documentId),
                q.relevant,
              ),
            );
            before.set(`hybrid\0${q.id}\0ndcg`, ndcgAt(10, hybrid.slice(0, 10), q.relevant));
          }
          rows.lexical.push({
            q,
            v: ndcgAt(
              10,
              lexical.slice(0, 10).map((m) => m.documentId),
              q.relevant,
            ),
          });
          rows.hybrid.push({ q, v: ndcgAt(10, hybrid.slice(0, 10), q.relevant) });
        }
        for (const mode of ['lexical', 'hybrid']) {
          const cells = sets.flatMap((s) =>
            [...kinds, 'overall'].map((k) =>
              mean(
                rows[mode]
                  .filter((r) => r.q.set === s && (k === 'overall' || r.q.kind === k))
                  .map((r) => r.v),
              ),
            ),
          );
          console.log(
            `  ${`${mode} ${name}`.padEnd(22)} ${cells.map((v) => (Number.isNaN(v) ? '' : v.toFixed(3)).padStart(10)).join('')}${w === 0 ? '' : `  (top 10 changed: ${changed[mode]})`}`,
          );
        }
      }
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--weights');
  const weights = at === -1 ? [0.5, 1, 2] : args[at + 1].split(',').map(Number);
  const files = args.filter(
    (a, i) => !a.startsWith('--') && args[i - 1] !== '--weights' && args[i - 1] !== '--show',
  );
  if (files.length === 0) {
    console.error('usage: node bench/retrieval/anchor-lab.mjs DUMP... [--weights 0.5,1,2]');
    process.exit(2);
  }
  const shown = args.indexOf('--show');
  await main(files, weights, shown === -1 ? undefined : args[shown + 1]);
}
