import { featureHash } from '../embedders/feature-hashing';
import { lexicalRecord, type LexicalRecord } from '../lexical/lexical-record';
import { trainingTermsOf } from '../lexical/training-terms';
import { trainFrom, type LsaModel, type LsaOptions, type TrainingDocument } from '../semantic/lsa';
import { chunkMarkdown, type ChunkerOptions } from './markdown-chunker';

/** A document to chunk (and, with the local embedder, to embed) off the request loop. */
export interface WorkDocument {
  readonly id: string;
  readonly title: string;
  readonly body: string;
}

/**
 * One chunk as the vector store keeps it, and the text that is embedded for it (left out
 * when the thread embedded it already: it need not travel back).
 */
export interface PreparedChunk {
  readonly index: number;
  readonly headings: readonly string[];
  readonly content: string;
  readonly text?: string;
  /** cl100k tokens of `text` (see Chunk.tokens). */
  readonly tokens: number;
}

export interface PrepareTask {
  readonly kind: 'prepare';
  readonly documents: readonly WorkDocument[];
  readonly chunker: ChunkerOptions;
  /** Embed the chunks with the local embedder at this length; absent: chunk only. */
  readonly localDimensions?: number;
}

export interface EmbedTask {
  readonly kind: 'embed';
  readonly texts: readonly string[];
  readonly dimensions: number;
}

/** Training of a latent-semantic model (semantic/lsa.ts). */
export interface LsaTask {
  readonly kind: 'lsa';
  readonly documents: readonly TrainingDocument[];
  readonly options: LsaOptions;
}

export type WorkTask = PrepareTask | EmbedTask | LsaTask;

export interface PrepareResult {
  /** The chunks of each document, in the order given. */
  readonly chunks: PreparedChunk[][];
  /** The lexical record of each document, in the order given. */
  readonly records: LexicalRecord[];
  /** With `localDimensions`: every chunk's vector, in order, back to back. */
  readonly vectors?: Float32Array;
}

/** Vectors back to back: `texts.length × dimensions` floats. */
export type EmbedResult = Float32Array;

/**
 * The CPU-heavy part of vector sync: markdown chunking (cl100k token counts), the text
 * analysis of the lexical index, local embedding (feature hashing) and the training of the
 * latent-semantic model. Pure and synchronous; it runs in a worker thread (see
 * vector-work.thread.ts), never on the event loop that serves requests.
 */
export function runWork(task: PrepareTask): PrepareResult;
export function runWork(task: EmbedTask): EmbedResult;
export function runWork(task: LsaTask): LsaModel;
export function runWork(task: WorkTask): PrepareResult | EmbedResult | LsaModel;
export function runWork(task: WorkTask): PrepareResult | EmbedResult | LsaModel {
  if (task.kind === 'embed') return embedFlat(task.texts, task.dimensions);
  if (task.kind === 'lsa') return trainFrom(task.documents, trainingTermsOf, task.options);
  const chunks = task.documents.map((document) =>
    chunkMarkdown(document.body, document.title, task.chunker).map(
      ({ index, headings, content, text, tokens }) => ({ index, headings, content, text, tokens }),
    ),
  );
  const records = task.documents.map((document, i) =>
    lexicalRecord(document.title, document.body, chunks[i]),
  );
  if (task.localDimensions === undefined) return { chunks, records };
  const vectors = embedFlat(
    chunks.flat().map((c) => c.text),
    task.localDimensions,
  );
  return {
    chunks: chunks.map((list) =>
      list.map(({ index, headings, content, tokens }) => ({ index, headings, content, tokens })),
    ),
    records,
    vectors,
  };
}

function embedFlat(texts: readonly string[], dimensions: number): Float32Array {
  const flat = new Float32Array(texts.length * dimensions);
  texts.forEach((text, i) => flat.set(featureHash(text, dimensions), i * dimensions));
  return flat;
}

/** Splits vectors laid back to back into one view per vector (no copy). */
export function splitVectors(flat: Float32Array, dimensions: number): Float32Array[] {
  const vectors: Float32Array[] = [];
  for (let at = 0; at < flat.length; at += dimensions)
    vectors.push(flat.subarray(at, at + dimensions));
  return vectors;
}
