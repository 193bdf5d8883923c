/**
 * A word of the query that is code rather than language: camelCase, snake_case, a dotted or
 * hyphenated name, an option (`--dry-run`), a path, a call, an ACRONYM, letters and digits
 * together (`v2`, `ERR_42`).
 */
const CODE_LIKE = /\p{Ll}\p{Lu}|_|\.\w|\w-\w|--|\/|::|\(\)|\b\p{Lu}{2,}\b|\p{L}\d|\d\p{L}/u;

/**
 * Whether a query reads as keywords to look up (an identifier, an option, an error code, or
 * one or two words) rather than a sentence in the asker's words. Hybrid search leans on the
 * lexical side for the first (the text holds them as written; an embedding model blurs
 * `maxRetries` into "retries") and on the vector side for the second (docs/search.md).
 */
export function readsAsKeywords(query: string): boolean {
  return CODE_LIKE.test(query) || query.trim().split(/\s+/u).length <= 2;
}
