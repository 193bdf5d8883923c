/**
 * Each document's term ids and counts as the lexical index keeps them (what removing the
 * document takes away, and what the semantic model reads): the ids ascending, each written as
 * the varint of its gap from the one before, followed by its count (title, headings and body
 * together, capped at 255), some 2–3 bytes a term instead of 6.
 */

/**
 * A document's term ids (ascending) and counts (each at most 255) as bytes: each id as the
 * varint of its gap. Each pair is sorted as one number, the id above the count's byte, in a
 * typed array (a numeric sort without a comparator), and written into bytes allocated once:
 * a rebuild of the index from its records calls this for every document.
 */
export function writeDocTerms(ids: readonly number[], counts: readonly number[]): Uint8Array {
  const keys = new Float64Array(ids.length);
  for (let i = 0; i < ids.length; i++) keys[i] = ids[i] * 256 + counts[i];
  keys.sort();
  // At most five bytes of gap (ids below 2^35) and one of count a term.
  const bytes = new Uint8Array(ids.length * 6);
  let at = 0;
  let previous = 0;
  for (let i = 0; i < keys.length; i++) {
    const id = Math.floor(keys[i] / 256);
    let gap = id - previous;
    previous = id;
    while (gap >= 0x80) {
      bytes[at++] = (gap & 0x7f) | 0x80;
      gap >>>= 7;
    }
    bytes[at++] = gap;
    bytes[at++] = keys[i] - id * 256;
  }
  return bytes.slice(0, at);
}

/** Calls `each` with every term id and count of {@link writeDocTerms}'s bytes. */
export function readDocTerms(bytes: Uint8Array, each: (id: number, count: number) => void): void {
  let id = 0;
  for (let at = 0; at < bytes.length;) {
    let gap = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = bytes[at++];
      gap |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    id += gap;
    each(id, bytes[at++]);
  }
}
