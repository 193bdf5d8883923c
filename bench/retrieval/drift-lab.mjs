// When a latent-semantic model learnt again replaces the one searched (docs/search.md, "The
// vector side without a model"): past 5 000 documents both learn from a sample of that size, and
// the one searched stays unless it misses more than 2 % of what the new one learnt,
// or the new one of what it learnt (`vocabularyCovered` and `stillCurrent` in
// src/vectors/semantic/semantic-training.ts). This measures both shares, with the build's own
// code (dist/: the lexical records, the trainer, the rule), on knowledge bases of 100 000
// documents grown (or shrunk) in three ways:
//
// - by more of the same: documents each of six paragraphs drawn at random from the first and
//   second corpora (a vocabulary of some 18 000 terms), the model searched learnt from them,
//   the new one after as many again (a sample half new), from a sample with none in common,
//   and after three times as many again; also with models of 8 000 terms (fewer than the
//   vocabulary: its edge is where samples differ most);
// - by a new subject: the model searched learnt from documents of the first corpus's paragraphs
//   only, the new one after 2 000 to 25 000 documents of the second corpus's were added;
// - by a subject leaving: learnt with 25 000 documents of the second corpus's, which then go;
// - and the search-scale bench's documents (bench/search-scale/documents.mjs) from 100 000 to
//   200 000.
//
//   node bench/retrieval/drift-lab.mjs      (after npm run build; some 15 minutes on one core)
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scaleDocument } from '../search-scale/documents.mjs';
import { buildCorpus } from './corpus.mjs';
import { buildSecondCorpus } from './second-corpus.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const dist = (path) => require(join(root, 'dist', 'src', path));
const { lexicalRecord } = dist('vectors/lexical/lexical-record');
const { totalCount } = dist('vectors/lexical/lexical-index');
const { trainLsa } = dist('vectors/semantic/lsa');
const { vocabularyCovered, stillCurrent, SEMANTIC_SAMPLE, SEMANTIC_DIMENSIONS } = dist(
  'vectors/semantic/semantic-training',
);

const quiet = { warn: () => {} };
const first = await buildCorpus(root, quiet);
const second = await buildSecondCorpus(root, quiet);
const documentsOf = (corpus) => corpus.documents ?? corpus;
const paragraphsOf = (corpus) =>
  documentsOf(corpus).flatMap((d) => d.body.split(/\n\s*\n/).filter((p) => p.trim().length > 80));

/** A document's terms and counts, as the server learns from them. */
function countsOf(document) {
  const record = lexicalRecord(document.title, document.body, [
    { headings: [], content: document.body },
  ]);
  return new Map(record.terms.map((term, i) => [term, totalCount(record.fields[i])]));
}

/** The server's sample: the documents first in the order of `md5(document_id)`. */
const hashOf = (id) => createHash('md5').update(id).digest('hex');
const learn = (documents, maxTerms = 20_000) =>
  trainLsa(
    [...documents]
      .map((document) => ({ document, key: hashOf(document.document_id) }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map(({ document }) => document)
      .slice(0, SEMANTIC_SAMPLE)
      .map(countsOf),
    { dimensions: SEMANTIC_DIMENSIONS, maxTerms },
  );

/** mulberry32: 32-bit state, so no float rounding shortens its period. */
let seed = 7;
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
/** `n` documents of six paragraphs drawn from `paragraphs`. */
const mixed = (n, tag, paragraphs) =>
  Array.from({ length: n }, (_, i) => ({
    document_id: `${tag}/${i}`,
    title: tag,
    body: Array.from(
      { length: 6 },
      () => paragraphs[Math.floor(random() * paragraphs.length)],
    ).join('\n\n'),
  }));

/** The two shares (what the new model learnt that the one searched knows, and back). */
function report(name, searched, learnt) {
  const shares = [vocabularyCovered(searched, learnt), vocabularyCovered(learnt, searched)];
  const verdict = stillCurrent(searched, learnt) ? 'stays' : 'replaced';
  const percent = (share) => `${(100 * share).toFixed(2).padStart(6)} %`;
  console.log(`${name.padEnd(52)} ${shares.map(percent).join('  ')}  ${verdict}`);
}

const both = [...paragraphsOf(first), ...paragraphsOf(second)];
const base = mixed(100_000, 'm', both);
for (const terms of [20_000, 8000]) {
  const searched = learn(base, terms);
  report(
    `same subjects, ${terms} terms: twice as many`,
    searched,
    learn([...base, ...mixed(100_000, 'n', both)], terms),
  );
  report(
    `same subjects, ${terms} terms: no document in common`,
    searched,
    learn(mixed(100_000, 'o', both), terms),
  );
  report(
    `same subjects, ${terms} terms: four times as many`,
    searched,
    learn([...base, ...mixed(300_000, 'p', both)], terms),
  );
}
const own = mixed(100_000, 'a', paragraphsOf(first));
const searched = learn(own);
for (const added of [2000, 5000, 10_000, 25_000]) {
  report(
    `a new subject: ${added} documents added`,
    searched,
    learn([...own, ...mixed(added, `b${added}`, paragraphsOf(second))]),
  );
}
const leaving = mixed(25_000, 'leaving', paragraphsOf(second));
report('a subject leaves: its 25000 documents deleted', learn([...own, ...leaving]), searched);
const scale = (n) => Array.from({ length: n }, (_, i) => scaleDocument(documentsOf(first), i));
report('the search-scale bench: 100 000 to 200 000', learn(scale(100_000)), learn(scale(200_000)));
