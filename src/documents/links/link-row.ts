import { extractLinks } from './markdown-links';
import { keysOf, targetOf } from './link-targets';

/**
 * What kb_links keeps of one document's body: for each link (each key of it), the key it is
 * found by and its text, side by side (the `i`th key is found by the `i`th label's link), each
 * list one text of {@link LINK_SEPARATOR}-separated parts, as the write statements take them.
 * `null` for a body without a link to a document (no row at all).
 */
export interface LinkRow {
  readonly keys: string;
  readonly labels: string;
}

/**
 * The separator of a row's keys and labels as the write statements receive them: one text per
 * document rather than an array of arrays, which PostgreSQL takes apart far faster. Ids hold
 * no control character, and labels have theirs turned into spaces.
 */
export const LINK_SEPARATOR = '\u001f';

/** Longest link text kept, in characters. */
const MAX_LABEL = 200;

/** The link row of `body`, written as the document `documentId`. */
export function linkRowOf(documentId: string, body: string): LinkRow | null {
  const links = extractLinks(body);
  if (links.length === 0) return null;
  const keys: string[] = [];
  const labels: string[] = [];
  for (const link of links) {
    const target = targetOf(link, documentId);
    if (target === null) continue;
    const label = cleanLabel(link.label);
    for (const key of keysOf(target)) {
      keys.push(key);
      labels.push(label);
    }
  }
  // Joined at once: a bulk write holds its documents' rows until its statement, and two
  // texts a document cost the collector less than forty.
  return keys.length === 0
    ? null
    : { keys: keys.join(LINK_SEPARATOR), labels: labels.join(LINK_SEPARATOR) };
}

function cleanLabel(label: string): string {
  const text = /[\u0000-\u001f\u007f]/.test(label)
    ? label.replace(/[\u0000-\u001f\u007f]+/g, ' ')
    : label;
  return text.length > MAX_LABEL ? text.slice(0, MAX_LABEL) : text;
}
