// The retrieval baselines: rankings a user could get from a maintained search library
// instead of this server, computed over the same corpus in the same run.
//
// - `minisearch`: MiniSearch with its own BM25 (k1 1.2, b 0.7, d 0.5) and term processing
//   (lower-case, no stemming, no stop words), fields title (boost 2) and body, OR of the
//   query's terms, no prefix or fuzzy matching. One change from its defaults: the tokenizer
//   also splits on symbols (Unicode \p{S}); the default one keeps backticks, `$`, `|`, `<`,
//   `=` inside tokens, so in markdown "`maxRetries`" would never match "maxRetries".
// - `lunr`: lunr 2 with its default English pipeline (trimmer, stop-word filter, Porter
//   stemmer; BM25 k1 1.2, b 0.75) over whole documents. Two variants are built, fields title
//   and body, and body only; both are reported, and the best baseline per kind is the
//   highest of all rows. The query is built from `lunr.tokenizer(text)`, each token a term
//   run through the pipeline, so user text is never parsed as lunr's query syntax.
// - `orama`: Orama 3 with English stemming (its tokenizer's `stemming: true`, language
//   `english`), fields title and body, its default BM25 and `threshold` (documents holding
//   any of the terms). Its defaults keep stop words and match every indexed word that
//   starts with a query term, which a question of common words drowns in (adding
//   @orama/stopwords' English list raised its questions' nDCG@10 only from 0.12 to 0.18).
// A folder query keeps only documents under the folder, among all the matches each library
// returns (never a cut of its first ten).
import lunr from 'lunr';
import MiniSearch from 'minisearch';
import { create, insertMultiple, search } from '@orama/orama';

export const TOP_K = 10;
/** Orama answers at most this many hits a search; enough for any folder of the corpus. */
const ORAMA_LIMIT = 10_000;

/** MiniSearch's default separators (spaces, line breaks, punctuation) plus symbols. */
const SEPARATORS = /[\n\r\p{Z}\p{P}\p{S}]+/u;

/**
 * @param {{document_id: string, title: string, body: string}[]} corpus
 * @returns {Promise<Record<string, (query: string, prefix?: string) => string[]>>} a ranker
 *   per baseline: ids best first, at most TOP_K
 */
export async function baselineRankers(corpus) {
  return {
    minisearch: miniSearchRanker(corpus),
    lunr: lunrRanker(corpus, ['title', 'body']),
    'lunr (body only)': lunrRanker(corpus, ['body']),
    orama: await oramaRanker(corpus),
  };
}

function miniSearchRanker(corpus) {
  const index = new MiniSearch({
    idField: 'document_id',
    fields: ['title', 'body'],
    storeFields: [],
    tokenize: (text) => text.split(SEPARATORS).filter((t) => t !== ''),
    searchOptions: { boost: { title: 2 }, prefix: false, fuzzy: false, combineWith: 'OR' },
  });
  index.addAll(corpus);
  return (query, prefix) => {
    const folder = normalisePrefix(prefix);
    const hits = index.search(query, folder ? { filter: (hit) => hit.id.startsWith(folder) } : {});
    return hits.slice(0, TOP_K).map((hit) => hit.id);
  };
}

function lunrRanker(corpus, fields) {
  const index = lunr(function build() {
    this.ref('document_id');
    for (const field of fields) this.field(field);
    for (const document of corpus) this.add(document);
  });
  return (query, prefix) => {
    const folder = normalisePrefix(prefix);
    const tokens = lunr.tokenizer(query);
    const hits = index.query((q) => {
      for (const token of tokens) q.term(token.toString(), { usePipeline: true });
    });
    return inFolder(
      hits.map((hit) => hit.ref),
      folder,
    );
  };
}

async function oramaRanker(corpus) {
  const db = create({
    schema: { document_id: 'string', title: 'string', body: 'string' },
    components: { tokenizer: { stemming: true, language: 'english' } },
  });
  await insertMultiple(
    db,
    corpus.map(({ document_id, title, body }) => ({ document_id, title, body })),
  );
  return (query, prefix) => {
    const folder = normalisePrefix(prefix);
    const found = search(db, {
      term: query,
      properties: ['title', 'body'],
      limit: ORAMA_LIMIT,
    });
    return inFolder(
      found.hits.map((hit) => hit.document.document_id),
      folder,
    );
  };
}

function inFolder(ids, folder) {
  return (folder ? ids.filter((id) => id.startsWith(folder)) : ids).slice(0, TOP_K);
}

/** `pkg/x` and `pkg/x/` name the same folder (whole segments), as on the server. */
export function normalisePrefix(prefix) {
  if (prefix === undefined || prefix === null || prefix === '') return '';
  return prefix.endsWith('/') ? prefix : `${prefix}/`;
}
