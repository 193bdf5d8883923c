import { createHash } from 'node:crypto';
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import { normalise } from '../../common/unit-vector';

/**
 * Latent semantic analysis: term associations learnt from the knowledge base itself, so that
 * a question in other words than a document's still lands near it. A truncated SVD of the
 * documents' weighted term matrix (randomized, Halko–Martinsson–Tropp) gives each term a
 * dense vector; a text's vector is the weighted sum of its terms' vectors ("fold-in"),
 * L2-normalised. Pure and synchronous: training runs on a worker thread (src/vectors/work),
 * embedding wherever the model is (lexical.replica.ts, for every document it holds).
 */
export interface LsaModel {
  /** Content hash: the same training data gives the same id. */
  readonly id: string;
  /** Length of the vectors. */
  readonly dimensions: number;
  /** Documents the model was trained on. */
  readonly documents: number;
  /** The vocabulary, in the order of {@link vectors}' rows. */
  readonly terms: readonly string[];
  /** Row `i` (dimensions floats) is the vector of `terms[i]`. */
  readonly vectors: Float32Array;
  /** Inverse document frequency of each term over the training documents. */
  readonly idf: Float32Array;
}

/** One training document: its analysed terms and their frequencies. */
export type TermCounts = ReadonlyMap<string, number>;

export interface LsaOptions {
  readonly dimensions: number;
  /** Most terms kept (the most frequent of those in at least two documents). */
  readonly maxTerms?: number;
  /** Power iterations of the randomized SVD (more: more accurate, slower). */
  readonly powerIterations?: number;
  /** Seed of the random projection: the same data gives the same model. */
  readonly seed?: number;
}

const OVERSAMPLING = 16;
/**
 * Exponent of the singular values in the term vectors, 0.5: between the fold-in projection
 * (-1, documents as coordinates) and term-space similarity (0); ranked best on the
 * retrieval benchmark (docs/search.md).
 */
const SINGULAR_EXPONENT = 0.5;

/**
 * A training document as it travels to a thread: its lexical record as stored (its terms, one
 * per line, and its postings' bytes), decoded there (by the lexical index's
 * `trainingTermsOf`, handed to {@link trainFrom}), so that the request loop builds nothing
 * for it.
 */
export interface TrainingDocument {
  readonly terms: string;
  readonly postings: Uint8Array;
}

/** Trains models off the request loop (the vector work pool's threads). */
export interface LsaTrainer {
  trainLsa(documents: readonly TrainingDocument[], options: LsaOptions): Promise<LsaModel>;
}

/** Injection token of the {@link LsaTrainer}. */
export const LSA_TRAINER = Symbol('LSA_TRAINER');

/** A training document decoded: its distinct terms and each one's count, in the same order. */
export interface DecodedTraining {
  readonly terms: readonly string[];
  readonly counts: Float64Array;
}

/**
 * {@link trainLsa} over documents as they travel to a thread, decoded one at a time by
 * `decode` into term ids and counts (a few bytes a term) rather than a map per document (some
 * 80 bytes a term: 300 MB for a sample of 5 000 documents of 2–6 KB).
 */
export function trainFrom(
  documents: readonly TrainingDocument[],
  decode: (document: TrainingDocument) => DecodedTraining,
  options: LsaOptions,
): LsaModel {
  const vocabulary = new Map<string, number>();
  const names: string[] = [];
  const sample = documents.map((document) => {
    const { terms, counts } = decode(document);
    const ids = new Int32Array(terms.length);
    terms.forEach((term, i) => {
      let id = vocabulary.get(term);
      if (id === undefined) {
        id = names.length;
        vocabulary.set(term, id);
        names.push(term);
      }
      ids[i] = id;
    });
    return { ids, counts };
  });
  return trainCompact(names, sample, options);
}

/** A document of a training sample: ids of a vocabulary and each one's count. */
interface CompactDocument {
  readonly ids: Int32Array;
  readonly counts: Float64Array;
}

/** Trains a model on `documents`; throws when they hold too few shared terms to learn from. */
export function trainLsa(documents: readonly TermCounts[], options: LsaOptions): LsaModel {
  const vocabulary = new Map<string, number>();
  const names: string[] = [];
  const sample = documents.map((counts) => {
    const ids = Int32Array.from(counts.keys(), (term) => {
      let id = vocabulary.get(term);
      if (id === undefined) {
        id = names.length;
        vocabulary.set(term, id);
        names.push(term);
      }
      return id;
    });
    return { ids, counts: Float64Array.from(counts.values()) };
  });
  return trainCompact(names, sample, options);
}

function trainCompact(
  names: readonly string[],
  documents: readonly CompactDocument[],
  options: LsaOptions,
): LsaModel {
  const n = documents.length;
  const df = new Int32Array(names.length);
  for (const { ids } of documents) for (const id of ids) df[id]++;
  // Terms in at least two documents and at most half of them: the ones that can associate.
  const kept = names
    .map((_, id) => id)
    .filter((id) => df[id] >= 2 && df[id] <= Math.max(2, n / 2))
    .sort((a, b) => df[b] - df[a] || (names[a] < names[b] ? -1 : 1))
    .slice(0, options.maxTerms ?? 50_000);
  const terms = kept.map((id) => names[id]);
  const k = Math.min(options.dimensions, terms.length - 1, n - 1);
  if (k < 2)
    throw new Error(`too little to learn from: ${n} documents, ${terms.length} shared terms`);
  const index = new Int32Array(names.length).fill(-1);
  kept.forEach((id, t) => (index[id] = t));
  const idf = Float32Array.from(kept, (id) => Math.log(1 + n / df[id]));
  const columns = documents.map((document) => weighted(document, index, idf));

  const svd = randomizedSvd(columns, terms.length, k, options);
  const vectors = new Float32Array(terms.length * options.dimensions);
  for (let j = 0; j < k; j++) {
    const scale = Math.pow(svd.values[j], SINGULAR_EXPONENT - 1);
    for (let t = 0; t < terms.length; t++) {
      vectors[t * options.dimensions + j] = svd.left[j * terms.length + t] * scale;
    }
  }
  const hash = createHash('sha256')
    .update(`${options.dimensions}\0${terms.join('\0')}\0`)
    .update(Buffer.from(vectors.buffer))
    .digest('hex')
    .slice(0, 16);
  const id = LSA_VERSION === 1 ? hash : `v${LSA_VERSION}-${hash}`;
  return { id, dimensions: options.dimensions, documents: n, terms, vectors, idf };
}

/**
 * How models are learnt: this file's algorithm and the parameters semantic-training.ts gives
 * it. A model is kept in place of one learnt again only when both were learnt the same way
 * (semantic-training.ts, `stillCurrent`): bump this with any change that would learn another
 * model from the same documents, and every knowledge base learns a model again soon after the
 * upgrade (`modelDue`), which replaces the one it searched. The version is in the model's id:
 * version 1's ids are the bare hash (models stored before there was a version), later ones
 * `v2-…`.
 */
export const LSA_VERSION: number = 1;

/** The {@link LSA_VERSION} a model of this id was learnt by. */
export function lsaVersionOf(id: string): number {
  const versioned = /^v(\d+)-/.exec(id);
  return versioned === null ? 1 : Number(versioned[1]);
}

/**
 * Embeds texts with a trained model: each term of the model weighs (1 + ln tf) × idf, the
 * vector is the weighted sum of the terms' vectors, L2-normalised (zero when the text holds
 * no term of the model).
 */
export class LsaEmbedding {
  private readonly index: ReadonlyMap<string, number>;
  /** The terms of the text being embedded, as row and count (see {@link embedRows}). */
  private keys: Float64Array = new Float64Array(256);

  constructor(readonly model: LsaModel) {
    this.index = new Map(model.terms.map((term, i) => [term, i]));
  }

  embed(counts: TermCounts): Float32Array {
    return this.embedRows((add) => {
      for (const [term, tf] of counts) {
        const t = this.index.get(term);
        if (t !== undefined) add(t, tf);
      }
    });
  }

  /** The model's row of `term` (its place in {@link LsaModel.terms}), if the model has it. */
  rowOf(term: string): number | undefined {
    return this.index.get(term);
  }

  /**
   * {@link embed} of terms given by their model rows: `visit` calls `add(row, tf)` once for
   * each term, in any order. The terms are summed in the order of their rows whatever the
   * order they come in, so that a document's vector is the same to the bit however its terms
   * are held (the lexical index numbers them in the order it met them, which a restart from
   * its snapshot keeps and a rebuild from the records does not).
   */
  embedRows(visit: (add: (row: number, tf: number) => void) => void): Float32Array {
    const { dimensions, vectors, idf } = this.model;
    let keys = this.keys;
    let n = 0;
    visit((row, tf) => {
      // A term a record holds only in a passage's text (the chunker's passages are not the
      // body verbatim) is counted 0 in its fields: it weighs nothing, as in training, where
      // (1 + ln 0) would have made the whole vector NaN.
      if (!(tf > 0)) return;
      if (n === keys.length) keys = this.keys = grown(keys);
      keys[n++] = row * ROW_FACTOR + tf;
    });
    const vector = new Float32Array(dimensions);
    for (const key of keys.subarray(0, n).sort()) {
      const t = Math.floor(key / ROW_FACTOR);
      const w = (1 + Math.log(key - t * ROW_FACTOR)) * idf[t];
      const row = t * dimensions;
      for (let j = 0; j < dimensions; j++) vector[j] += w * vectors[row + j];
    }
    return normalise(vector);
  }
}

/** A term's row and count in one number, rows first: counts below 2³², rows below 2²¹. */
const ROW_FACTOR = 2 ** 32;

function grown(keys: Float64Array): Float64Array {
  const next = new Float64Array(keys.length * 2);
  next.set(keys);
  return next;
}

interface SparseColumn {
  readonly rows: Int32Array;
  readonly values: Float64Array;
}

/** A document's column: (1 + ln tf) × idf per kept term (`index`: -1 for the others), L2-normalised. */
function weighted(document: CompactDocument, index: Int32Array, idf: Float32Array): SparseColumn {
  const rows: number[] = [];
  const values: number[] = [];
  let norm = 0;
  document.ids.forEach((id, i) => {
    const t = index[id];
    const tf = document.counts[i];
    if (t < 0 || tf <= 0) return;
    const w = (1 + Math.log(tf)) * idf[t];
    rows.push(t);
    values.push(w);
    norm += w * w;
  });
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return { rows: Int32Array.from(rows), values: Float64Array.from(values, (v) => v * scale) };
}

/**
 * The `k` largest singular values of A (terms × documents, given by its columns) and their
 * left singular vectors, column after column (`left[j * terms + t]`).
 */
function randomizedSvd(
  columns: readonly SparseColumn[],
  terms: number,
  k: number,
  options: LsaOptions,
): { values: Float64Array; left: Float64Array } {
  const docs = columns.length;
  const l = Math.min(k + OVERSAMPLING, docs, terms);
  const random = gaussian(options.seed ?? 0x5eed);
  // Ω: documents × l; Y = A Ω: terms × l (both column-major, one column after another).
  const omega = Float64Array.from({ length: docs * l }, random);
  let y = times(columns, terms, omega, l);
  for (let i = 0; i < (options.powerIterations ?? 2); i++) {
    orthonormalise(y, terms, l);
    const z = transposeTimes(columns, y, terms, l);
    orthonormalise(z, docs, l);
    y = times(columns, terms, z, l);
  }
  orthonormalise(y, terms, l);
  // B = Qᵀ A (l × documents); B Bᵀ (l × l) has the squared singular values of A.
  const bt = transposeTimes(columns, y, terms, l);
  const gram = Matrix.zeros(l, l);
  for (let a = 0; a < l; a++) {
    for (let b = a; b < l; b++) {
      let sum = 0;
      for (let d = 0; d < docs; d++) sum += bt[a * docs + d] * bt[b * docs + d];
      gram.set(a, b, sum);
      gram.set(b, a, sum);
    }
  }
  const eigen = new EigenvalueDecomposition(gram, { assumeSymmetric: true });
  const order = eigen.realEigenvalues
    .map((value, i) => [value, i] as const)
    .sort((a, b) => b[0] - a[0])
    .slice(0, k);
  const w = eigen.eigenvectorMatrix;
  const values = Float64Array.from(order, ([value]) => Math.sqrt(Math.max(value, 1e-12)));
  // U = Q W: each left singular vector is Q's columns mixed by an eigenvector.
  const left = new Float64Array(k * terms);
  order.forEach(([, i], j) => {
    for (let c = 0; c < l; c++) {
      const weight = w.get(c, i);
      if (weight === 0) continue;
      for (let t = 0; t < terms; t++) left[j * terms + t] += weight * y[c * terms + t];
    }
  });
  return { values, left };
}

/** A M, M given column-major (documents × cols); the result terms × cols, column-major. */
function times(
  columns: readonly SparseColumn[],
  terms: number,
  m: Float64Array,
  cols: number,
): Float64Array {
  const docs = columns.length;
  const out = new Float64Array(terms * cols);
  for (let d = 0; d < docs; d++) {
    const { rows, values } = columns[d];
    for (let c = 0; c < cols; c++) {
      const factor = m[c * docs + d];
      if (factor === 0) continue;
      const base = c * terms;
      for (let i = 0; i < rows.length; i++) out[base + rows[i]] += values[i] * factor;
    }
  }
  return out;
}

/** Aᵀ M, M given column-major (terms × cols); the result documents × cols, column-major. */
function transposeTimes(
  columns: readonly SparseColumn[],
  m: Float64Array,
  terms: number,
  cols: number,
): Float64Array {
  const docs = columns.length;
  const out = new Float64Array(docs * cols);
  for (let d = 0; d < docs; d++) {
    const { rows, values } = columns[d];
    for (let c = 0; c < cols; c++) {
      const base = c * terms;
      let sum = 0;
      for (let i = 0; i < rows.length; i++) sum += values[i] * m[base + rows[i]];
      out[c * docs + d] = sum;
    }
  }
  return out;
}

/** Modified Gram–Schmidt on the `cols` columns (of length `length`) of `m`, in place. */
function orthonormalise(m: Float64Array, length: number, cols: number): void {
  for (let c = 0; c < cols; c++) {
    const base = c * length;
    for (let p = 0; p < c; p++) {
      const prev = p * length;
      let dot = 0;
      for (let i = 0; i < length; i++) dot += m[base + i] * m[prev + i];
      for (let i = 0; i < length; i++) m[base + i] -= dot * m[prev + i];
    }
    let norm = 0;
    for (let i = 0; i < length; i++) norm += m[base + i] * m[base + i];
    const scale = norm > 1e-24 ? 1 / Math.sqrt(norm) : 0;
    for (let i = 0; i < length; i++) m[base + i] *= scale;
  }
}

/** A seeded standard normal generator (xorshift32 and Box–Muller): reproducible training. */
function gaussian(seed: number): () => number {
  let state = seed >>> 0 || 1;
  const uniform = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return ((state >>> 0) + 0.5) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}
