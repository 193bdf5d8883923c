import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PostgresVectorReplica } from './postgres-vector.replica';
import { ancestorsOf, decodeVector, encodeVectors } from './vector-payload';
import {
  DocumentPoints,
  StoreReady,
  VectorHit,
  VectorSearchOptions,
  VectorStore,
  VectorStoreCheck,
} from './vector-store.interface';

/**
 * The in-memory index's candidates read and scored exactly per document wanted: its scores
 * are within some 1 % of the cosine, so the exact top is among twice as many (and ten more).
 */
const RESCORED_SHARE = 2;
const RESCORED_EXTRA = 10;

/** Chunks written per statement (1.5 MB of vectors at 768 dimensions, plus their text). */
const CHUNKS_PER_STATEMENT = 500;

/**
 * The PostgreSQL vector store: one row per chunk in `kb_chunk_vectors` (the vector as
 * float32 bytes; pgvector is not assumed), searched exactly by cosine.
 *
 * PostgreSQL has no fast vector arithmetic without pgvector (a dot product over 30 000
 * arrays takes about a second in SQL), so the search itself runs on each server's
 * in-memory copy of the vectors ({@link PostgresVectorReplica}), kept current from a change
 * log; the table stays the truth, and snippets are read from it.
 *
 * Scale limit: memory of a byte a dimension per chunk on every server (its vectors quantized:
 * 30 000 chunks of the local embedder's 768 dimensions ≈ 23 MB, of a 384-dimension model
 * 12 MB), and a search scans every chunk (sixteen dimensions per SIMD step).
 */
/** `vector` at unit length. */
function unitLength(vector: Float32Array): Float32Array {
  let norm = 0;
  for (let d = 0; d < vector.length; d++) norm += vector[d] * vector[d];
  return norm > 0 ? vector.map((x) => x / Math.sqrt(norm)) : vector;
}

/** The cosine of a unit `query` and a stored vector (float32 bytes, stored at unit length). */
function cosineOf(query: Float32Array, stored: Buffer): number {
  const vector = decodeVector(stored);
  let dot = 0;
  let norm = 0;
  for (let d = 0; d < vector.length; d++) {
    dot += query[d] * vector[d];
    norm += vector[d] * vector[d];
  }
  return norm > 0 ? dot / Math.sqrt(norm) : 0;
}

export class PostgresVectorStore implements VectorStore {
  readonly name = 'postgres' as const;
  private readonly logger = new Logger('PostgresVectorStore');
  private replica: PostgresVectorReplica | undefined;

  /**
   * `loadOnFirstSearch`: the in-memory copy is loaded by the first search rather than at
   * start (with the local embedder's semantic model, the vector side searches the store only
   * while the knowledge base is small, so a large one never needs its vectors in memory).
   */
  constructor(
    private readonly dataSource: DataSource,
    private readonly options: { loadOnFirstSearch?: boolean } = {},
  ) {}

  async init(embedder: { id: string; dimensions: number }): Promise<StoreReady> {
    const runner = this.dataSource.createQueryRunner('master');
    await runner.connect();
    let reset: false | string = false;
    try {
      await runner.startTransaction();
      await runner.query(
        `INSERT INTO kb_chunk_vector_meta (embedder, dimensions) VALUES ($1, $2)
         ON CONFLICT (singleton) DO NOTHING`,
        [embedder.id, embedder.dimensions],
      );
      // The row lock makes concurrent starts agree: the first one resets, the others see it.
      const [meta]: { embedder: string; dimensions: number }[] = await runner.query(
        `SELECT embedder, dimensions FROM kb_chunk_vector_meta FOR UPDATE`,
      );
      if (meta.embedder !== embedder.id || meta.dimensions !== embedder.dimensions) {
        this.logger.warn(
          `stored vectors come from ${meta.embedder} (${meta.dimensions} dimensions), the embedder is now ${embedder.id} (${embedder.dimensions}): dropping them, every document will be embedded again`,
        );
        await runner.query(`DELETE FROM kb_chunk_vectors`);
        await runner.query(
          `UPDATE kb_chunk_vector_meta
              SET embedder = $1, dimensions = $2, generation = generation + 1`,
          [embedder.id, embedder.dimensions],
        );
        reset = 'the embedder changed';
      }
      await runner.commitTransaction();
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      throw error;
    } finally {
      await runner.release();
    }
    await this.replica?.close();
    this.replica = new PostgresVectorReplica(this.dataSource, embedder.dimensions);
    // Loaded in the background, so the first search does not wait for it.
    if (!this.options.loadOnFirstSearch) {
      this.replica.refresh().catch((e) => this.logger.warn(`loading vectors: ${String(e)}`));
    }
    return { reset };
  }

  /**
   * Writes the documents' chunks in one transaction, in statements of at most
   * {@link CHUNKS_PER_STATEMENT} chunks, so that a batch of large documents never has the
   * event loop prepare one huge statement; the vectors travel as one binary parameter per
   * statement (no text encoding), cut into rows by PostgreSQL. Chunks past each document's
   * new count are deleted last.
   */
  async replaceDocuments(documents: readonly DocumentPoints[]): Promise<void> {
    if (documents.length === 0) return;
    const chunks = documents.flatMap((document) =>
      document.chunks.map((chunk) => ({ document, chunk })),
    );
    const dimensions = chunks[0]?.chunk.vector.length ?? 0;
    // Per-chunk copies of the document's arrays: unnest cannot take arrays of arrays.
    const arrays = new Map(
      documents.map((d) => [
        d,
        { tags: JSON.stringify(d.tags), ancestors: JSON.stringify(ancestorsOf(d.documentId)) },
      ]),
    );
    await this.dataSource.transaction(async (manager) => {
      for (let at = 0; at < chunks.length; at += CHUNKS_PER_STATEMENT) {
        const slice = chunks.slice(at, at + CHUNKS_PER_STATEMENT);
        await manager.query(
          `INSERT INTO kb_chunk_vectors
             (document_id, chunk_index, revision, title, tags, ancestors, heading, content, embedding)
           SELECT c.document_id, c.chunk_index, c.revision, c.title,
                  ARRAY(SELECT jsonb_array_elements_text(c.tags::jsonb)),
                  ARRAY(SELECT jsonb_array_elements_text(c.ancestors::jsonb)),
                  c.heading, c.content,
                  substring($9::bytea FROM ((c.n - 1) * $10::int + 1)::int FOR $10::int)
             FROM unnest($1::text[], $2::integer[], $3::integer[], $4::text[], $5::text[],
                         $6::text[], $7::text[], $8::text[])
                  WITH ORDINALITY
                  AS c(document_id, chunk_index, revision, title, tags, ancestors, heading, content, n)
           ON CONFLICT (document_id, chunk_index) DO UPDATE
              SET revision = EXCLUDED.revision, title = EXCLUDED.title, tags = EXCLUDED.tags,
                  ancestors = EXCLUDED.ancestors, heading = EXCLUDED.heading,
                  content = EXCLUDED.content, embedding = EXCLUDED.embedding`,
          [
            slice.map((c) => c.document.documentId),
            slice.map((c) => c.chunk.chunkIndex),
            slice.map((c) => c.document.revision),
            slice.map((c) => c.document.title),
            slice.map((c) => arrays.get(c.document)!.tags),
            slice.map((c) => arrays.get(c.document)!.ancestors),
            slice.map((c) => c.chunk.heading),
            slice.map((c) => c.chunk.content),
            encodeVectors(slice.map((c) => c.chunk.vector)),
            dimensions * 4,
          ],
        );
      }
      await manager.query(
        `DELETE FROM kb_chunk_vectors t
          USING unnest($1::text[], $2::integer[]) AS k(document_id, chunks)
          WHERE t.document_id = k.document_id AND t.chunk_index >= k.chunks`,
        [documents.map((d) => d.documentId), documents.map((d) => d.chunks.length)],
      );
    });
    // Committed: this server's copy takes the new chunks now (the change log brings the
    // same rows back later; setting them again is harmless).
    await this.replica?.apply(documents);
  }

  async deleteDocuments(documentIds: readonly string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await this.dataSource.query(
      `DELETE FROM kb_chunk_vectors WHERE document_id = ANY($1::text[])`,
      [documentIds],
    );
    this.replica?.remove(documentIds);
  }

  /**
   * The documents whose best chunk is nearest `vector`, by exact cosine: the in-memory index
   * (its scores approximate, a byte a dimension) names twice the documents wanted, and their
   * chunks' stored float32 vectors are read with their passages and scored exactly here.
   */
  async search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorHit[]> {
    if (!this.replica) throw new Error('the PostgreSQL vector store is not initialised');
    const candidates = await this.replica.search(
      vector,
      options.limit * RESCORED_SHARE + RESCORED_EXTRA,
      options,
      2,
    );
    if (candidates.length === 0) return [];
    const rows: {
      document_id: string;
      chunk_index: number;
      revision: number;
      heading: string;
      content: string;
      title: string | null;
      embedding: Buffer;
    }[] = await this.dataSource.query(
      `SELECT c.document_id, c.chunk_index, c.revision, c.heading, c.content, d.title, c.embedding
         FROM unnest($1::text[], $2::integer[]) AS h(document_id, chunk_index)
         JOIN kb_chunk_vectors c ON c.document_id = h.document_id AND c.chunk_index = h.chunk_index
         LEFT JOIN kb_documents d ON d.document_id = c.document_id AND d.deleted_at IS NULL`,
      [candidates.map((h) => h.documentId), candidates.map((h) => h.chunkIndex)],
    );
    const query = unitLength(vector);
    // Each document's best chunk by exact cosine; a chunk deleted since the index was read is
    // dropped rather than shown half-known.
    const byDocument = new Map<string, VectorHit>();
    for (const row of rows) {
      const hit: VectorHit = {
        documentId: row.document_id,
        chunkIndex: row.chunk_index,
        revision: row.revision,
        score: cosineOf(query, row.embedding),
        heading: row.heading,
        content: row.content,
        title: row.title,
      };
      const held = byDocument.get(hit.documentId);
      if (!held || hit.score > held.score) byDocument.set(hit.documentId, hit);
    }
    return [...byDocument.values()]
      .sort((a, b) => b.score - a.score || (a.documentId < b.documentId ? -1 : 1))
      .slice(0, options.limit);
  }

  async check(): Promise<VectorStoreCheck> {
    const [meta]: { embedder: string; dimensions: number }[] = await this.dataSource.query(
      `SELECT embedder, dimensions FROM kb_chunk_vector_meta`,
    );
    return {
      ok: meta !== undefined,
      detail: {
        store: this.name,
        embedder: meta?.embedder ?? null,
        dimensions: meta?.dimensions ?? null,
        index_loaded: this.replica?.stats.loaded ?? false,
        indexed_documents: this.replica?.stats.documents ?? 0,
        indexed_chunks: this.replica?.stats.chunks ?? 0,
        index_bytes: this.replica?.stats.bytes ?? 0,
      },
    };
  }

  describe(): Record<string, unknown> {
    return { name: this.name, table: 'kb_chunk_vectors', search: 'exact cosine, in memory' };
  }

  async close(): Promise<void> {
    await this.replica?.close();
  }

  /** Reads the change log now (a search does it at most every 100 ms). */
  refresh(): Promise<void> {
    return this.replica?.refresh() ?? Promise.resolve();
  }
}
