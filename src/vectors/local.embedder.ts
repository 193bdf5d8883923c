import { EmbedOptions, Embedder, EmbedderHealth, normalise } from './embedder.interface';
import type { VectorsMetrics } from './vectors.metrics';
import type { VectorWorkPool } from './work/vector-work.pool';

/** Default length of local vectors (EMBEDDINGS_DIMENSIONS overrides it). */
export const LOCAL_DEFAULT_DIMENSIONS = 768;

// Feature weights: whole words count most, word pairs add phrase sense, character
// trigrams let inflections and compounds meet ("embedder" ~ "embedding").
const WORD_WEIGHT = 1;
const PAIR_WEIGHT = 0.4;
const TRIGRAM_WEIGHT = 0.2;
const MAX_WORD_CHARS = 40;

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Texts shorter than this in all are hashed right here (a search query takes some
 * microseconds): a hop to a thread that may be busy chunking a large batch would only make
 * the search wait. Longer inputs go to the pool.
 */
const INLINE_CHARS = 4096;

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
 * The offline embedder: feature hashing of words, adjacent word pairs and character
 * trigrams into a signed vector, square-root damped and L2-normalised.
 *
 * Deterministic (same text, same vector, on every machine) and fast (tens of thousands of
 * chunks per second on one core), but **lexical**: texts are close when they share words
 * or word parts, not when they mean the same thing in different words. With a pool, the
 * hashing of anything longer than a query runs on its worker threads, off the request loop.
 */
export class LocalEmbedder implements Embedder {
  readonly provider = 'local';
  readonly model: string;
  private lastSuccessAt: string | null = null;

  constructor(
    readonly dimensions: number = LOCAL_DEFAULT_DIMENSIONS,
    readonly maxInputTokens = 8191,
    private readonly metrics?: VectorsMetrics,
    private readonly pool?: VectorWorkPool,
  ) {
    this.model = `feature-hashing-v1-${dimensions}`;
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    const stop = this.metrics?.embeddingDuration.startTimer({ provider: this.provider });
    const chars = texts.reduce((total, text) => total + text.length, 0);
    const vectors =
      this.pool && chars >= INLINE_CHARS
        ? await this.pool.embed(texts, this.dimensions, options.signal)
        : texts.map((text) => this.embedOne(text));
    stop?.();
    this.metrics?.embeddingRequests.inc({ provider: this.provider, outcome: 'success' });
    this.lastSuccessAt = new Date().toISOString();
    return vectors;
  }

  health(): EmbedderHealth {
    return { ok: true, lastSuccessAt: this.lastSuccessAt, lastError: null };
  }

  recordSuccess(): void {
    this.lastSuccessAt = new Date().toISOString();
  }

  /** The vector of one text, computed synchronously. */
  embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    const words = tokenize(text);
    const useful = words.filter((w) => !STOPWORDS.has(w));
    const kept = useful.length > 0 ? useful : words;

    let previous = 0;
    for (let i = 0; i < kept.length; i++) {
      const word = kept[i];
      const hash = hashString(word, 0x9747b28c);
      this.add(vector, hash, WORD_WEIGHT);
      if (i > 0)
        this.add(vector, mix(Math.imul(previous, 0x01000193) ^ hash ^ 0x5bd1e995), PAIR_WEIGHT);
      previous = hash;
      this.addTrigrams(vector, word);
    }
    // Square-root damping keeps a word repeated fifty times from drowning the rest.
    for (let i = 0; i < vector.length; i++) {
      const v = vector[i];
      vector[i] = v < 0 ? -Math.sqrt(-v) : Math.sqrt(v);
    }
    return normalise(vector);
  }

  /** Trigrams of the word framed by boundary marks: `^em`, `emb`, ..., `er$`. */
  private addTrigrams(vector: Float32Array, word: string): void {
    const length = Math.min(word.length, MAX_WORD_CHARS);
    if (length < 3) return;
    let a = 0x5e; // '^'
    let b = word.charCodeAt(0);
    for (let i = 1; i <= length; i++) {
      const c = i < length ? word.charCodeAt(i) : 0x24; // '$'
      this.add(vector, trigramHash(a, b, c), TRIGRAM_WEIGHT);
      a = b;
      b = c;
    }
  }

  private add(vector: Float32Array, hash: number, weight: number): void {
    const bucket = (hash >>> 0) % this.dimensions;
    // An independent bit gives the sign, so collisions cancel out on average.
    vector[bucket] += mix(hash ^ 0x27d4eb2f) & 1 ? weight : -weight;
  }
}

/** Lower-cased words and numbers of any script. */
export function tokenize(text: string): string[] {
  const words = text.normalize('NFKC').toLowerCase().match(WORD);
  return words ?? [];
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
