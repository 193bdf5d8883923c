/** A UTF-16 surrogate without its pair (a string cut inside an emoji): it has no UTF-8 form. */
export const LONE_SURROGATE =
  /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * The text as PostgreSQL will hold it: each lone surrogate written as U+FFFD (what
 * `String.prototype.toWellFormed` does, past the ES2023 library this code compiles against).
 */
export function wellFormed(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATES, '\uFFFD') : text;
}
