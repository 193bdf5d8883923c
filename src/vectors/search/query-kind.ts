/**
 * A word of the query that is code rather than language: camelCase, snake_case, a dotted or
 * hyphenated name, an option (`--dry-run`), a path, a call, an ACRONYM, letters and digits
 * together (`v2`, `ERR_42`).
 */
const CODE_LIKE = /\p{Ll}\p{Lu}|_|\.\w|\w-\w|--|\/|::|\(\)|\b\p{Lu}{2,}\b|\p{L}\d|\d\p{L}/u;

/**
 * What a query reads as, for hybrid search's weights (docs/search.md, "Fusion"):
 *
 * - `keywords` to look up: one or two words, or words of which at least a quarter are code
 *   (`pg_restore options`, `npm run build --dry-run`): the text holds them as written, and an
 *   embedding model blurs `maxRetries` into "retries";
 * - a `codeSentence`: a sentence in the asker's words that names some code on the way (`how do
 *   I set maxRetries`; and `sign-in`, `read-only`, which read as code too): an embedding model
 *   reads the sentence around the name, the latent-semantic model knows the name alone;
 * - a `sentence` with no code in it.
 */
export type QueryKind = 'keywords' | 'codeSentence' | 'sentence';

export function queryKind(query: string): QueryKind {
  const words = query.trim().split(/\s+/u);
  if (words.length <= 2) return 'keywords';
  const code = words.filter((word) => CODE_LIKE.test(word)).length;
  if (code * 4 >= words.length) return 'keywords';
  return code > 0 ? 'codeSentence' : 'sentence';
}

/** Whether a query reads as keywords ({@link queryKind}). */
export function readsAsKeywords(query: string): boolean {
  return queryKind(query) === 'keywords';
}
