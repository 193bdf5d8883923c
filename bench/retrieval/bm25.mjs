// BM25 baseline over the retrieval corpus, with MiniSearch (a devDependency: `minisearch`).
// Fields: title (boost 2) and body; MiniSearch's default BM25 parameters (k1 1.2, b 0.7,
// d 0.5) and default term processing (lower-case); no prefix search, no fuzzy matching; OR
// of the query's terms. For a folder query only documents whose id starts with the prefix
// are kept.
//
// One change from MiniSearch's defaults: the tokenizer splits on symbols (Unicode \p{S}) as
// well as on spaces and punctuation. The default one keeps backticks, `$`, `|`, `<`, `=` …
// inside tokens, so in markdown "`maxRetries`" would never match the query "maxRetries".
import MiniSearch from 'minisearch';

export const BM25_TOP_K = 10;

/** MiniSearch's default separators (spaces, line breaks, punctuation) plus symbols. */
const SEPARATORS = /[\n\r\p{Z}\p{P}\p{S}]+/u;

/**
 * @param {{document_id: string, title: string, body: string}[]} corpus
 * @returns {(query: string, prefix?: string) => string[]} ranked ids, best first, at most 10
 */
export function bm25Ranker(corpus) {
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
    return hits.slice(0, BM25_TOP_K).map((hit) => hit.id);
  };
}

/** `pkg/x` and `pkg/x/` name the same folder (whole segments), as on the server. */
export function normalisePrefix(prefix) {
  if (prefix === undefined || prefix === null || prefix === '') return '';
  return prefix.endsWith('/') ? prefix : `${prefix}/`;
}
