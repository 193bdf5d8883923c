import { normalise } from '../../common/unit-vector';

// Feature weights: whole words count most, word pairs add phrase sense, character
// trigrams let inflections and compounds meet ("embedder" ~ "embedding").
const WORD_WEIGHT = 1;
const PAIR_WEIGHT = 0.4;
const TRIGRAM_WEIGHT = 0.2;
const MAX_WORD_CHARS = 40;

const WORD = /[\p{L}\p{N}]+/gu;

// Words too common to say anything about a text; they still count when nothing else is there.
const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his ' +
    'i if in into is it its me my no not of on or our she so such than that the their them ' +
    'then there these they this those to too us was we were what when where which while who ' +
    'why will with would you your'
  ).split(' '),
);

/**
 * The local embedder's vector of `text`: feature hashing of its words, adjacent word pairs
 * and character trigrams into a signed vector of `dimensions`, square-root damped and
 * L2-normalised. Pure and synchronous: the local embedder calls it for short texts, the
 * vector work threads for chunks (src/vectors/work).
 */
export function featureHash(text: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  const words = tokenize(text);
  const useful = words.filter((w) => !STOPWORDS.has(w));
  const kept = useful.length > 0 ? useful : words;

  let previous = 0;
  for (let i = 0; i < kept.length; i++) {
    const word = kept[i];
    const hash = hashString(word, 0x9747b28c);
    add(vector, hash, WORD_WEIGHT);
    if (i > 0) add(vector, mix(Math.imul(previous, 0x01000193) ^ hash ^ 0x5bd1e995), PAIR_WEIGHT);
    previous = hash;
    addTrigrams(vector, word);
  }
  // Square-root damping keeps a word repeated fifty times from drowning the rest.
  for (let i = 0; i < vector.length; i++) {
    const v = vector[i];
    vector[i] = v < 0 ? -Math.sqrt(-v) : Math.sqrt(v);
  }
  return normalise(vector);
}

/** Lower-cased words and numbers of any script. */
export function tokenize(text: string): string[] {
  const words = text.normalize('NFKC').toLowerCase().match(WORD);
  return words ?? [];
}

/** Trigrams of the word framed by boundary marks: `^em`, `emb`, ..., `er$`. */
function addTrigrams(vector: Float32Array, word: string): void {
  const length = Math.min(word.length, MAX_WORD_CHARS);
  if (length < 3) return;
  let a = 0x5e; // '^'
  let b = word.charCodeAt(0);
  for (let i = 1; i <= length; i++) {
    const c = i < length ? word.charCodeAt(i) : 0x24; // '$'
    add(vector, trigramHash(a, b, c), TRIGRAM_WEIGHT);
    a = b;
    b = c;
  }
}

function add(vector: Float32Array, hash: number, weight: number): void {
  const bucket = (hash >>> 0) % vector.length;
  // An independent bit gives the sign, so collisions cancel out on average.
  vector[bucket] += mix(hash ^ 0x27d4eb2f) & 1 ? weight : -weight;
}

/** FNV-1a over UTF-16 code units, finished with a murmur3 mix. */
function hashString(text: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix(h);
}

function trigramHash(a: number, b: number, c: number): number {
  let h = 0x811c9dc5 ^ 0x3c6ef372;
  h = Math.imul(h ^ a, 0x01000193);
  h = Math.imul(h ^ b, 0x01000193);
  h = Math.imul(h ^ c, 0x01000193);
  return mix(h);
}

/** murmur3's 32-bit finaliser: every input bit affects every output bit. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
