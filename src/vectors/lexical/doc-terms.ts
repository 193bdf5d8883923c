/**
 * Each document's term ids and counts as the lexical index keeps them (what removing the
 * document takes away, and what the semantic model reads): the ids ascending, each written as
 * the varint of its gap from the one before, followed by its count (title, headings and body
 * together, capped at 255), some 2–3 bytes a term instead of 6.
 */

/** A document's term ids (ascending) and counts as bytes: each id as the varint of its gap. */
export function writeDocTerms(ids: readonly number[], counts: readonly number[]): Uint8Array {
  const order = ids.map((_, i) => i).sort((a, b) => ids[a] - ids[b]);
  const bytes: number[] = [];
  let previous = 0;
  for (const i of order) {
    let gap = ids[i] - previous;
    previous = ids[i];
    while (gap >= 0x80) {
      bytes.push((gap & 0x7f) | 0x80);
      gap >>>= 7;
    }
    bytes.push(gap, counts[i]);
  }
  return Uint8Array.from(bytes);
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
