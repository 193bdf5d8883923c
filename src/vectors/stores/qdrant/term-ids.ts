/**
 * A term's index in the sparse vectors of the lexical side in Qdrant: MurmurHash3 (x86,
 * 32 bits, seed 0) of the term's UTF-8 bytes. The same in every process, version and restart
 * with no dictionary to share or keep, and the ids Qdrant's own BM25 tooling gives a token
 * (FastEmbed). Two terms may share an id: among a million distinct terms some hundred pairs
 * do (the birthday bound of 2³²), and such a pair is scored as one term (docs/search.md).
 */
export function termId(term: string): number {
  return murmur3(utf8(term));
}

const encoder = new TextEncoder();

/** The term's UTF-8 bytes; an ASCII term (most) without going through the encoder. */
function utf8(term: string): Uint8Array {
  const bytes = new Uint8Array(term.length);
  for (let i = 0; i < term.length; i++) {
    const code = term.charCodeAt(i);
    if (code >= 0x80) return encoder.encode(term);
    bytes[i] = code;
  }
  return bytes;
}

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** MurmurHash3_x86_32 with seed 0, as an unsigned 32-bit integer. */
export function murmur3(bytes: Uint8Array): number {
  let h = 0;
  const blocks = bytes.length & ~3;
  for (let i = 0; i < blocks; i += 4) {
    let k = bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = bytes.length & 3;
  if (tail > 0) {
    let k = 0;
    if (tail === 3) k ^= bytes[blocks + 2] << 16;
    if (tail >= 2) k ^= bytes[blocks + 1] << 8;
    k ^= bytes[blocks];
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
  }
  h ^= bytes.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
