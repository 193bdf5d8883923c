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
  readonly kind: 'target' | 'source' | 'name';
  /** For `name`: the title the document has or had ('' for the others). */
  readonly title: string;
  readonly queued_at: string;
}

/** A document whose anchor field is to be read again, as it stands. */
export interface AnchorTarget {
  readonly document_id: string;
  readonly title: string;
  readonly field: AnchorField;
  /** How many times the field was written: it is written again only if still so many. */
  readonly stamp: number;
  readonly sources: readonly string[];
}

/**
 * A document whose links are to be followed again: its body when alive, and the documents
 * whose anchor fields its links gave words to when those were last read.
 */
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

  /** The titles of the alive documents among `ids`. */
  async titles(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows: Array<{ document_id: string; title: string }> = await this.dataSource.query(
      `SELECT document_id, title FROM kb_documents
        WHERE document_id = ANY($1::text[]) AND deleted_at IS NULL`,
      [ids],
    );
    return new Map(rows.map((row) => [row.document_id, row.title]));
  }

  /** The documents that gave words to the anchor fields of `ids`. */
  async sourcesOfFields(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT DISTINCT unnest(anchor_sources) AS id FROM kb_lexical_documents
        WHERE document_id = ANY($1::text[]) AND anchor_sources <> '{}'`,
      [ids],
    );
    return rows.map((row) => row.id);
  }

  /** Whether the pipeline has documents waiting (one probe of its partial index). */
  async pipelineBusy(): Promise<boolean> {
    const [row]: Array<{ busy: boolean }> = await this.dataSource.query(
      `SELECT EXISTS (SELECT 1 FROM kb_documents WHERE vector_status = 'pending') AS busy`,
    );
    return row.busy;
  }

  /** Claims up to `limit` rows of the queue, oldest first, for {@link CLAIM_SECONDS}. */
  claim(limit: number): Promise<DueAnchor[]> {
    return this.dataSource.query(
      `WITH claimed AS (
         UPDATE kb_anchors_due q
            SET claimed_until = clock_timestamp() + make_interval(secs => ${CLAIM_SECONDS})
           FROM (SELECT document_id, kind, title FROM kb_anchors_due
                  WHERE claimed_until IS NULL OR claimed_until < clock_timestamp()
                  ORDER BY queued_at
                  LIMIT $1
                    FOR UPDATE SKIP LOCKED) c
          WHERE q.document_id = c.document_id AND q.kind = c.kind AND q.title = c.title
          RETURNING q.document_id, q.kind, q.title, q.queued_at::text AS queued_at)
       SELECT * FROM claimed`,
      [limit],
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
      anchor_stamp: number;
      anchor_sources: string[];
    }> = await this.dataSource.query(
      `SELECT l.document_id, d.title, l.anchor_terms, l.anchor_counts, l.anchor_length,
              l.anchor_stamp, l.anchor_sources
         FROM kb_lexical_documents l
         JOIN kb_documents d ON d.document_id = l.document_id AND d.deleted_at IS NULL
        WHERE l.document_id = ANY($1::text[])`,
      [ids],
    );
    return rows.map((row) => ({
      document_id: row.document_id,
      title: row.title,
      field: anchorFieldOfRow(row),
      stamp: row.anchor_stamp,
      sources: row.anchor_sources,
    }));
  }

  /** `ids` as sources: their bodies (`null` when deleted or gone) and the fields they gave words to. */
  async sources(ids: readonly string[]): Promise<AnchorSource[]> {
    if (ids.length === 0) return [];
    return this.dataSource.query(
      // The fields the sources gave words to, read once for the claim (not once a source).
      `WITH gave AS MATERIALIZED (
         SELECT source, l.document_id FROM kb_lexical_documents l, unnest(l.anchor_sources) AS source
          WHERE l.anchor_sources && $1::text[] AND l.anchor_sources <> '{}'
            AND source = ANY($1::text[]))
       SELECT s.id AS document_id,
              CASE WHEN d.deleted_at IS NULL THEN d.body END AS body,
              ARRAY(SELECT g.document_id FROM gave g WHERE g.source = s.id) AS targets
         FROM unnest($1::text[]) AS s(id)
         LEFT JOIN kb_documents d ON d.document_id = s.id`,
      [ids],
    );
  }

  /**
   * Ends a step, in one transaction: writes the fields that changed and their sources beside
   * the records (with `mirror`, the index outside PostgreSQL gets those records again, the
   * fields in, as the pipeline writes them), queues what they may change, and takes the
   * claimed rows off the queue (those queued again meanwhile stay, released). A field written
   * by another reader since it was read (its stamp moved on) is not overwritten but read
   * again. A failure leaves everything as it was, the claimed rows to be taken again.
   */
  async finish(
    step: {
      fields: ReadonlyArray<{
        documentId: string;
        stamp: number;
        field: AnchorField;
        sources: readonly string[];
      }>;
      targets: readonly string[];
      sources: readonly string[];
      claimed: readonly DueAnchor[];
    },
    mirror?: LexicalMirror | null,
  ): Promise<void> {
    await this.dataSource.transaction(async (manager: EntityManager) => {
      // In the order of ids, as the pipeline takes the same rows.
      const fields = [...step.fields].sort((a, b) => (a.documentId < b.documentId ? -1 : 1));
      const written: Array<{ document_id: string }> =
        fields.length === 0
          ? []
          : await manager.query(
              `WITH written AS (
                 UPDATE kb_lexical_documents l
                    SET anchor_terms = f.terms, anchor_counts = f.counts,
                        anchor_length = f.length, anchor_stamp = l.anchor_stamp + 1,
                        anchor_sources = string_to_array(f.sources, E'\n')
                   FROM unnest($1::text[], $2::int[], $3::text[], $4::bytea[], $5::int[],
                               $6::text[])
                        AS f(document_id, stamp, terms, counts, length, sources)
                  WHERE l.document_id = f.document_id AND l.anchor_stamp = f.stamp
                  RETURNING l.document_id)
               SELECT * FROM written`,
              [
                fields.map((f) => f.documentId),
                fields.map((f) => f.stamp),
                fields.map((f) => joinTerms(f.field.terms)),
                fields.map((f) => encodeAnchorCounts(f.field)),
                fields.map((f) => f.field.length),
                fields.map((f) => [...f.sources].sort().join('\n')),
              ],
            );
      const done = new Set(written.map((row) => row.document_id));
      const stale = fields.filter((f) => !done.has(f.documentId)).map((f) => f.documentId);
      await manager.query(
        `INSERT INTO kb_anchors_due (document_id, kind)
         SELECT id, kind FROM (
           SELECT id, 'target' AS kind FROM unnest($1::text[]) AS id
           UNION
           SELECT id, 'source' FROM unnest($2::text[]) AS id) AS due
         ORDER BY id, kind
         ON CONFLICT (document_id, kind, title) DO UPDATE SET queued_at = clock_timestamp()`,
        [[...step.targets, ...stale], step.sources],
      );
      const claimed = step.claimed;
      await manager.query(
        `WITH claimed AS (
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[])
                  AS c(document_id, kind, title, queued_at)),
         taken AS (
           DELETE FROM kb_anchors_due q USING claimed c
            WHERE q.document_id = c.document_id AND q.kind = c.kind AND q.title = c.title
              AND q.queued_at = c.queued_at)
         UPDATE kb_anchors_due q SET claimed_until = NULL
           FROM claimed c
          WHERE q.document_id = c.document_id AND q.kind = c.kind AND q.title = c.title
            AND q.queued_at <> c.queued_at`,
        [
          claimed.map((r) => r.document_id),
          claimed.map((r) => r.kind),
          claimed.map((r) => r.title),
          claimed.map((r) => r.queued_at),
        ],
      );
      if (!mirror || done.size === 0) return;
      const rows: LexicalRow[] = await manager.query(
        `${SELECT_DOCUMENTS} WHERE document_id = ANY($1::text[])`,
        [[...done]],
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
