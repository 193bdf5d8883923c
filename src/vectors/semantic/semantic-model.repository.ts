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
              (singleton, analyzer, model_id, learnt_at, dimensions, documents, terms, vectors, idf)
       VALUES (true, $1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (singleton) DO UPDATE
          SET analyzer = EXCLUDED.analyzer, model_id = EXCLUDED.model_id,
              dimensions = EXCLUDED.dimensions, documents = EXCLUDED.documents,
              learnt_at = EXCLUDED.learnt_at, terms = EXCLUDED.terms,
              vectors = EXCLUDED.vectors, idf = EXCLUDED.idf, saved_at = now()`,
      [ANALYZER_VERSION, model.id, learntAt, ...modelColumns(model)],
    );
  }

  /** The model kept for this analyzer, if any (and whole). */
  async load(): Promise<KeptModel | undefined> {
    const rows: Array<ModelRow & { model_id: string; learnt_at: number }> =
      await this.dataSource.query(
        `SELECT model_id, learnt_at, ${MODEL_COLUMNS} FROM kb_semantic_model WHERE analyzer = $1`,
        [ANALYZER_VERSION],
      );
    const row = rows[0];
    const model = row && modelOfRow(row.model_id, row);
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

/** The model a row holds; `undefined` when the row is not whole (its sizes disagree). */
export function modelOfRow(id: string, row: ModelRow): LsaModel | undefined {
  const terms = row.terms === '' ? [] : row.terms.split('\n');
  const vectors = floatsOf(row.vectors);
  const idf = floatsOf(row.idf);
  if (vectors.length !== terms.length * row.dimensions || idf.length !== terms.length) {
    return undefined;
  }
  return { id, dimensions: row.dimensions, documents: row.documents, terms, vectors, idf };
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
