import type { DataSource, EntityManager } from 'typeorm';
import { type AnchorField, encodeAnchorCounts, joinTerms } from './lexical-record';
import { averagesOf } from './lexical-records.repository';
import { anchorFieldOfRow, documentOf, type LexicalRow, SELECT_DOCUMENTS } from './lexical-rows';
import type { LexicalMirror } from './lexical-side';

/**
 * A row of `kb_anchors_due` as claimed: `queued_at` (to the microsecond, as text) tells whether
 * it was queued again since.
 */
export interface DueAnchor {
  readonly document_id: string;
  readonly kind: 'target' | 'source';
  readonly queued_at: string;
}

/** A document whose anchor field is to be read again, as it stands. */
export interface AnchorTarget {
  readonly document_id: string;
  readonly title: string;
  readonly field: AnchorField;
  readonly sources: readonly string[];
}

/** A document whose links are to be followed again: its body when alive, and what they named before. */
export interface AnchorSource {
  readonly document_id: string;
  readonly body: string | null;
  readonly targets: readonly string[];
}

/** How long a claim holds rows of the queue: a reader that stops leaves them to another then. */
const CLAIM_SECONDS = 60;

/**
 * The SQL of the anchor fields (migrations/1763800210000-anchor-text.ts): the queue of what
 * is to be read again, the fields and their sources beside the lexical records, and the
 * documents a record's links gave words to.
 */
export class AnchorFieldsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Rows of the queue. */
  async due(): Promise<number> {
    const [row]: Array<{ n: number }> = await this.dataSource.query(
      `SELECT count(*)::int AS n FROM kb_anchors_due`,
    );
    return row.n;
  }

  /** Claims up to `limit` rows of the queue, oldest first, for {@link CLAIM_SECONDS}. */
  claim(limit: number): Promise<DueAnchor[]> {
    return this.dataSource.query(
      `WITH claimed AS (
         UPDATE kb_anchors_due q
            SET claimed_until = clock_timestamp() + make_interval(secs => ${CLAIM_SECONDS})
           FROM (SELECT document_id, kind FROM kb_anchors_due
                  WHERE claimed_until IS NULL OR claimed_until < clock_timestamp()
                  ORDER BY queued_at
                  LIMIT $1
                    FOR UPDATE SKIP LOCKED) c
          WHERE q.document_id = c.document_id AND q.kind = c.kind
          RETURNING q.document_id, q.kind, q.queued_at::text AS queued_at)
       SELECT * FROM claimed`,
      [limit],
    );
  }

  /** Takes claimed rows off the queue, but those queued again since they were claimed. */
  async done(rows: readonly DueAnchor[]): Promise<void> {
    if (rows.length === 0) return;
    await this.dataSource.query(
      `DELETE FROM kb_anchors_due q
        USING unnest($1::text[], $2::text[], $3::timestamptz[]) AS d(document_id, kind, queued_at)
        WHERE q.document_id = d.document_id AND q.kind = d.kind AND q.queued_at = d.queued_at`,
      [rows.map((r) => r.document_id), rows.map((r) => r.kind), rows.map((r) => r.queued_at)],
    );
  }

  /** Queues documents' anchor fields (`targets`) and links (`sources`) to be read again. */
  async queue(targets: readonly string[], sources: readonly string[]): Promise<void> {
    if (targets.length === 0 && sources.length === 0) return;
    await this.dataSource.query(
      `INSERT INTO kb_anchors_due (document_id, kind)
       SELECT id, kind FROM (
         SELECT id, 'target' AS kind FROM unnest($1::text[]) AS id
         UNION
         SELECT id, 'source' FROM unnest($2::text[]) AS id) AS due
       ORDER BY id, kind
       ON CONFLICT (document_id, kind)
         DO UPDATE SET queued_at = clock_timestamp(), claimed_until = NULL`,
      [targets, sources],
    );
  }

  /** The alive documents among `ids` that have a lexical record, with their anchor fields. */
  async targets(ids: readonly string[]): Promise<AnchorTarget[]> {
    if (ids.length === 0) return [];
    const rows: Array<{
      document_id: string;
      title: string;
      anchor_terms: string;
      anchor_counts: Buffer;
      anchor_length: number;
      anchor_sources: string[];
    }> = await this.dataSource.query(
      `SELECT l.document_id, d.title, l.anchor_terms, l.anchor_counts, l.anchor_length,
              l.anchor_sources
         FROM kb_lexical_documents l
         JOIN kb_documents d ON d.document_id = l.document_id AND d.deleted_at IS NULL
        WHERE l.document_id = ANY($1::text[])`,
      [ids],
    );
    return rows.map((row) => ({
      document_id: row.document_id,
      title: row.title,
      field: anchorFieldOfRow(row),
      sources: row.anchor_sources,
    }));
  }

  /** The documents among `ids` that exist, with their bodies (`null` when deleted) and former targets. */
  async sources(ids: readonly string[]): Promise<AnchorSource[]> {
    if (ids.length === 0) return [];
    return this.dataSource.query(
      `SELECT d.document_id,
              CASE WHEN d.deleted_at IS NULL THEN d.body END AS body,
              coalesce(l.anchor_targets, '{}') AS targets
         FROM kb_documents d
         LEFT JOIN kb_lexical_documents l ON l.document_id = d.document_id
        WHERE d.document_id = ANY($1::text[])`,
      [ids],
    );
  }

  /** Records which documents a document's links give words to now. */
  async writeTargets(documentId: string, targets: readonly string[]): Promise<void> {
    await this.dataSource.query(
      `UPDATE kb_lexical_documents SET anchor_targets = $2::text[]
        WHERE document_id = $1 AND anchor_targets IS DISTINCT FROM $2::text[]`,
      [documentId, [...targets].sort()],
    );
  }

  /**
   * Writes anchor fields and their sources beside the records, in one transaction; with
   * `mirror`, the index outside PostgreSQL gets the documents' records again, the fields in
   * (inside the transaction, as the pipeline writes them).
   */
  async writeFields(
    fields: ReadonlyArray<{ documentId: string; field: AnchorField; sources: readonly string[] }>,
    mirror?: LexicalMirror | null,
  ): Promise<void> {
    if (fields.length === 0) return;
    await this.dataSource.transaction(async (manager: EntityManager) => {
      const ids = fields.map((f) => f.documentId);
      await manager.query(
        `UPDATE kb_lexical_documents l
            SET anchor_terms = f.terms, anchor_counts = f.counts, anchor_length = f.length,
                anchor_stamp = l.anchor_stamp + 1,
                anchor_sources = string_to_array(f.sources, E'\\n')
           FROM unnest($1::text[], $2::text[], $3::bytea[], $4::int[], $5::text[])
                AS f(document_id, terms, counts, length, sources)
          WHERE l.document_id = f.document_id`,
        [
          ids,
          fields.map((f) => joinTerms(f.field.terms)),
          fields.map((f) => encodeAnchorCounts(f.field)),
          fields.map((f) => f.field.length),
          fields.map((f) => [...f.sources].sort().join('\n')),
        ],
      );
      if (!mirror) return;
      const rows: LexicalRow[] = await manager.query(
        `${SELECT_DOCUMENTS} WHERE document_id = ANY($1::text[])`,
        [ids],
      );
      const documents = rows.map(documentOf).map((record) => ({
        documentId: record.documentId,
        revision: record.revision,
        tags: record.tags,
        passages: [],
        record,
        anchorStamp: record.anchorStamp,
      }));
      await mirror.mirror(manager, documents, [], await averagesOf(manager));
    });
  }
}
