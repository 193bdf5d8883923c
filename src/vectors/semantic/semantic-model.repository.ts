import type { DataSource } from 'typeorm';
import { ANALYZER_VERSION } from '../text/analyzer';
import type { LsaModel } from './lsa';

/** A model as kept, with the number of documents the knowledge base held when it was learnt. */
export interface KeptModel {
  readonly model: LsaModel;
  readonly learntAt: number;
}

/**
 * The latent-semantic model kept in PostgreSQL (`kb_semantic_model`, one row): saved when
 * learnt, loaded when a server starts, so that a restart searches with it at once. A model
 * of another analyzer's terms is never loaded (its terms would not match the index's).
 */
export class SemanticModelRepository {
  constructor(private readonly dataSource: DataSource) {}

  async save(model: LsaModel, learntAt: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO kb_semantic_model
              (singleton, analyzer, model_id, learnt_at, ${MODEL_COLUMNS})
       VALUES (true, $1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (singleton) DO UPDATE
          SET analyzer = EXCLUDED.analyzer, model_id = EXCLUDED.model_id,
              dimensions = EXCLUDED.dimensions, documents = EXCLUDED.documents,
              learnt_at = EXCLUDED.learnt_at, terms = EXCLUDED.terms,
              vectors = EXCLUDED.vectors, idf = EXCLUDED.idf, saved_at = now()`,
      [ANALYZER_VERSION, model.id, learntAt, ...modelColumns(model)],
    );
  }

  /**
   * Records that the model kept, if it is still `modelId`, was found as good as a new one at
   * `learntAt` documents (semantic-training.ts, `stillCurrent`): the count rules start from there.
   */
  async confirm(modelId: string, learntAt: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE kb_semantic_model SET learnt_at = $3 WHERE analyzer = $1 AND model_id = $2`,
      [ANALYZER_VERSION, modelId, learntAt],
    );
  }

  /** The model kept for this analyzer, if any (and whole). */
  async load(): Promise<KeptModel | undefined> {
    const rows: Array<ModelHead & { model_id: string; learnt_at: number }> =
      await this.dataSource.query(
        `SELECT model_id, learnt_at, ${MODEL_HEAD_COLUMNS} FROM kb_semantic_model WHERE analyzer = $1`,
        [ANALYZER_VERSION],
      );
    const row = rows[0];
    if (row === undefined) return undefined;
    const model = await modelOfParts(row.model_id, row, (from) =>
      this.dataSource.query(
        `SELECT ${VECTOR_PARTS} FROM kb_semantic_model ${vectorPartsFrom('$3')}
          WHERE analyzer = $1 AND model_id = $2 ORDER BY at`,
        [ANALYZER_VERSION, row.model_id, from],
      ),
    );
    return model && { model, learntAt: row.learnt_at };
  }
}

/**
 * A model's columns as PostgreSQL keeps them, in `kb_semantic_model` and in
 * `kb_qdrant_semantic` alike: its terms one per line, its vectors and idf as float32 bytes.
 */
export interface ModelRow {
  readonly dimensions: number;
  readonly documents: number;
  readonly terms: string;
  readonly vectors: Buffer;
  readonly idf: Buffer;
}

/** The columns of a {@link ModelRow}, in the order {@link modelColumns} gives their values. */
export const MODEL_COLUMNS = 'dimensions, documents, terms, vectors, idf';

/** A model's values for the columns {@link MODEL_COLUMNS} names, in that order. */
export function modelColumns(model: LsaModel): [number, number, string, Buffer, Buffer] {
  return [
    model.dimensions,
    model.documents,
    model.terms.join('\n'),
    bytesOf(model.vectors),
    bytesOf(model.idf),
  ];
}

/**
 * What a model's row holds but its vectors, read first ({@link MODEL_HEAD_COLUMNS}); the
 * vectors are read after in parts ({@link modelOfParts}).
 */
export interface ModelHead {
  readonly dimensions: number;
  readonly documents: number;
  readonly terms: string;
  readonly idf: Buffer;
  /** The length of the `vectors` column, bytes. */
  readonly vector_bytes: number;
}

/** The columns of a {@link ModelHead}. */
export const MODEL_HEAD_COLUMNS =
  'dimensions, documents, terms, idf, length(vectors) AS vector_bytes';

/**
 * A model's vectors are read in statements of {@link VECTOR_STATEMENT_BYTES}, each giving rows
 * of {@link VECTOR_PART_BYTES} as hex text, written straight into the model's array. Read in
 * one value, the vectors of a model of 20 000 terms (5 MB) were one message of 10 MB (a bytea
 * travels as hex), which the driver gathered in buffers it doubled up to 16 MB: some 30 MB of
 * buffers (measured) for a model of 3.6 MB, garbage an idle server had no reason to collect, and memory
 * glibc kept once it was. Messages of 32 KB fit the driver's buffer of 128 KB, reused from one
 * to the next; a statement's rows are garbage the young generation collects, not buffers; and
 * the model read in parts holds no copy of itself (docs/performance.md, "Going past one pod").
 */
export const VECTOR_PART_BYTES = 16 * 1024;
const VECTOR_STATEMENT_BYTES = 16 * VECTOR_PART_BYTES;

/**
 * The select list and the row source that read a row's vectors from byte `$n` (counted from 1,
 * `param` names it) on: `SELECT ${VECTOR_PARTS} FROM table ${vectorPartsFrom('$2')} WHERE ...
 * ORDER BY at`.
 */
export const VECTOR_PARTS = `encode(substring(vectors FROM at FOR ${VECTOR_PART_BYTES}), 'hex') AS hex`;
export function vectorPartsFrom(param: string): string {
  return `CROSS JOIN LATERAL generate_series(${param}::int, least(${param}::int + ${VECTOR_STATEMENT_BYTES - 1}, length(vectors)), ${VECTOR_PART_BYTES}) AS at`;
}

/**
 * The model of `head`, its vectors read by `parts` (the rows of {@link VECTOR_PARTS} from byte
 * `from` on, in order) into the model's array; `undefined` when the row is not whole (its sizes
 * disagree) or changed while read (the parts are read under the model's id: another model's
 * row gives none).
 */
export async function modelOfParts(
  id: string,
  head: ModelHead,
  parts: (from: number) => Promise<ReadonlyArray<{ hex: string }>>,
): Promise<LsaModel | undefined> {
  const terms = head.terms === '' ? [] : head.terms.split('\n');
  const idf = floatsOf(head.idf);
  const bytes = Number(head.vector_bytes);
  if (bytes !== terms.length * head.dimensions * 4 || idf.length !== terms.length) {
    return undefined;
  }
  const vectors = new Float32Array(bytes / 4);
  const target = Buffer.from(vectors.buffer);
  let offset = 0;
  while (offset < bytes) {
    const from = offset;
    for (const { hex } of await parts(from + 1)) {
      if (hex.length > 2 * (bytes - offset)) return undefined;
      offset += target.write(hex, offset, 'hex');
    }
    // No part (the row gone, or another model's now), or none that said anything.
    if (offset === from) return undefined;
  }
  return { id, dimensions: head.dimensions, documents: head.documents, terms, vectors, idf };
}

function bytesOf(values: Float32Array): Buffer {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
}

/** The floats of a bytea (copied: the driver's buffer may not be aligned to 4 bytes). */
function floatsOf(bytes: Buffer): Float32Array {
  const floats = new Float32Array(bytes.length / 4);
  new Uint8Array(floats.buffer).set(bytes.subarray(0, floats.length * 4));
  return floats;
}
