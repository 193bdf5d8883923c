// Longer than most files: all the SQL of one document is here, each write one statement that
// also sets its audit actor and writes the links of the body it writes, kept together so that
// no write can forget either.
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PreparedStatements } from '../database/prepared-statements';
import type { Document, DocumentPage, DocumentSummary, HistoryEntry } from './document.schemas';
import { readableIds, type Readable } from './access';
import type { LinkRow } from './links/link-row';

/**
 * A row of `kb_documents` as the queries read it: the document (document.schemas.ts) with its
 * times as the driver gives them, and the last indexing error.
 */
export type DocumentRow = Omit<Document, 'created_at' | 'updated_at' | 'deleted_at'> & {
  vector_error: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
};

export type DocumentSummaryRow = Omit<DocumentSummary, 'updated_at'> & { updated_at: Date };

/** A row of a keyset page: the resource listing's item, its time already ISO text. */
export type DocumentPageRow = DocumentPage['items'][number];

/** What a write stores: the content fields of a document. */
export type DocumentContent = Pick<
  Document,
  'body' | 'title' | 'tags' | 'metadata' | 'content_hash'
>;

/**
 * Fields of an update; `undefined` keeps the stored value. A new body comes with its links
 * (link-row.ts), `null` when it has none.
 */
export type DocumentChanges = Partial<DocumentContent> & { links?: LinkRow | null };

/** A snapshot whole, as {@link DocumentsRepository.snapshot} reads it. */
export type SnapshotBodyRow = Omit<SnapshotRow, 'body_bytes'> & {
  body: string;
  metadata: Record<string, unknown>;
};

/** A snapshot as the history query reads it (times as Dates, the size as PostgreSQL counts it). */
export type SnapshotRow = Omit<HistoryEntry, 'deleted_at' | 'snapshot_at'> & {
  deleted_at: Date | null;
  snapshot_at: Date;
};

/**
 * Leading CTE of every writing statement: sets the transaction-local `app.actor` read by
 * the audit and snapshot triggers, and `app.links`, which tells the links trigger that the
 * statement writes the links of the bodies it writes (`kb_links`, see {@link linksOf}).
 * `$actor` is replaced by the actor's parameter number.
 */
const ACTOR = `WITH actor AS (SELECT set_config('app.actor', $actor::text, true),
                                     set_config('app.links', 'given', true))`;

/**
 * The CTE writing the link rows (migrations/1763800200000-links.ts) of the documents `rows`
 * (a CTE of the statement, or a set with `document_id`, `keys` and `labels`) whose `keys`
 * is not null: their keys and texts, each one separated text ({@link LinkRow}).
 * A written body without links gets no row; the trigger drops the one it had.
 */
function linksOf(rows: string): string {
  return `linked AS (
         INSERT INTO kb_links (source_id, keys, labels)
         SELECT r.document_id, string_to_array(r.keys, E'\\x1f'), string_to_array(r.labels, E'\\x1f')
           FROM ${rows} AS r
          WHERE r.keys IS NOT NULL
         ON CONFLICT (source_id) DO UPDATE SET keys = EXCLUDED.keys, labels = EXCLUDED.labels)`;
}

/** A document's link row as two parameters (`null`, `null` without links). */
export function linkParameters(links: LinkRow | null): [string | null, string | null] {
  return links === null ? [null, null] : [links.keys, links.labels];
}

/**
 * The end of a create: a soft-deleted document of the same id comes back with the new
 * content, its revision continuing; an alive one is left alone (no row returned).
 */
const REVIVE = `ON CONFLICT (document_id) DO UPDATE
            SET parent_id = EXCLUDED.parent_id, title = EXCLUDED.title, tags = EXCLUDED.tags,
                body = EXCLUDED.body, metadata = EXCLUDED.metadata,
                content_hash = EXCLUDED.content_hash,
                revision = kb_documents.revision + 1, deleted_at = NULL
          WHERE kb_documents.deleted_at IS NOT NULL`;

const COLUMNS = `document_id, parent_id, title, tags, body, metadata, revision, content_hash,
  vector_status, vector_revision, vector_error, created_at, updated_at, deleted_at`;
/**
 * {@link COLUMNS} but the body, for writes that sent it: a 1 MiB body is not read back from
 * PostgreSQL only to be decoded again.
 */
const COLUMNS_BUT_BODY = COLUMNS.replace(' body,', '');

/**
 * All document SQL. Queries only: the rules (validation, revisions, patch) live in
 * DocumentsService. Writes take the actor, recorded by the audit and snapshot triggers
 * through the transaction-local `app.actor` setting.
 */
@Injectable()
export class DocumentsRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly statements: PreparedStatements,
  ) {}

  /** The alive document, if the caller may read it (`readable`: see readableIds). */
  async findAlive(documentId: string, readable: Readable = null): Promise<DocumentRow | null> {
    const rows = await this.statements.query<DocumentRow>(
      'kb_documents_find_alive',
      `SELECT ${COLUMNS} FROM kb_documents
        WHERE document_id = $1 AND deleted_at IS NULL AND ${readableIds(2)}`,
      [documentId, readable],
    );
    return rows[0] ?? null;
  }

  /** Alive documents among `ids` the caller may read, in no particular order. */
  async findManyAlive(ids: readonly string[], readable: Readable): Promise<DocumentRow[]> {
    if (ids.length === 0) return [];
    return this.statements.query<DocumentRow>(
      'kb_documents_find_many_alive',
      `SELECT ${COLUMNS} FROM kb_documents
        WHERE document_id = ANY($1::text[]) AND deleted_at IS NULL AND ${readableIds(2)}`,
      [ids, readable],
    );
  }

  /**
   * Revision and liveness of a document, deleted or not; `null` when it never existed (or
   * the caller may not read it).
   */
  async findState(
    documentId: string,
    readable: Readable = null,
  ): Promise<{ revision: number; deleted: boolean } | null> {
    const rows = await this.statements.query<{ revision: number; deleted: boolean }>(
      'kb_documents_find_state',
      `SELECT revision, deleted_at IS NOT NULL AS deleted FROM kb_documents
        WHERE document_id = $1 AND ${readableIds(2)}`,
      [documentId, readable],
    );
    return rows[0] ?? null;
  }

  /**
   * {@link insertOrRevive} for many documents in one statement (a bulk write's creates, each
   * id once): the rows written come back; an id missing from them is alive already.
   */
  async insertManyOrRevive(
    documents: ReadonlyArray<{
      documentId: string;
      parentId: string | null;
      content: DocumentContent;
      links: LinkRow | null;
    }>,
    actor: string,
  ): Promise<Array<Omit<DocumentRow, 'body'>>> {
    if (documents.length === 0) return [];
    const column = <T>(pick: (d: (typeof documents)[number]) => T) => documents.map(pick);
    const links = documents.map((d) => linkParameters(d.links));
    return this.write(
      'kb_documents_insert_many_or_revive',
      actor,
      `${ACTOR},
       written AS (
         INSERT INTO kb_documents (document_id, parent_id, title, tags, body, metadata, content_hash)
           SELECT d.document_id, d.parent_id, d.title,
                  ARRAY(SELECT jsonb_array_elements_text(d.tags)), d.body, d.metadata, d.content_hash
             FROM actor,
                  unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::text[], $6::jsonb[],
                         $7::text[])
                  AS d(document_id, parent_id, title, tags, body, metadata, content_hash)
           ${REVIVE}
           RETURNING ${COLUMNS_BUT_BODY}),
       ${linksOf(`(SELECT l.* FROM unnest($1::text[], $8::text[], $9::text[])
                     AS l(document_id, keys, labels)
                    WHERE l.document_id IN (SELECT document_id FROM written))`)}
       SELECT * FROM written`,
      [
        column((d) => d.documentId),
        column((d) => d.parentId),
        column((d) => d.content.title),
        column((d) => JSON.stringify(d.content.tags)),
        column((d) => d.content.body),
        column((d) => JSON.stringify(d.content.metadata)),
        column((d) => d.content.content_hash),
        links.map(([keys]) => keys),
        links.map(([, labels]) => labels),
      ],
    );
  }

  /**
   * Moves an alive document to a new id in one transaction: its row, its earlier versions and
   * its audit trail take the new id (the audit gains `moved-away` under the old id and `move`
   * under the new one); what the vector pipeline derived from it under the old id is
   * dropped and it is queued to be indexed again, and the listeners are told the old id is
   * gone. Nothing is written when the source is missing or deleted, its revision is not
   * `expectedRevision`, or any document (alive or deleted) holds the new id.
   */
  async move(
    from: string,
    to: string,
    parentOfTo: string | null,
    expectedRevision: number | undefined,
    actor: string,
    linksAt: (documentId: string, body: string) => LinkRow | null,
  ): Promise<
    | { kind: 'moved'; row: DocumentRow }
    | { kind: 'missing' }
    | { kind: 'conflict'; revision: number }
    | { kind: 'taken' }
  > {
    return this.statements.transaction(async (query) => {
      const [source] = await query<{ revision: number }>(
        `SELECT revision FROM kb_documents
          WHERE document_id = $1 AND deleted_at IS NULL FOR UPDATE`,
        [from],
      );
      if (!source) return { kind: 'missing' } as const;
      if (expectedRevision !== undefined && source.revision !== expectedRevision) {
        return { kind: 'conflict', revision: source.revision } as const;
      }
      const taken = await query(`SELECT 1 FROM kb_documents WHERE document_id = $1 FOR UPDATE`, [
        to,
      ]);
      if (taken.length > 0) return { kind: 'taken' } as const;
      for (const table of ['kb_chunk_vectors', 'kb_passages', 'kb_lexical_documents']) {
        await query(`DELETE FROM ${table} WHERE document_id = $1`, [from]);
      }
      await query(
        `SELECT set_config('app.actor', $1::text, true), set_config('app.links', 'given', true)`,
        [actor],
      );
      const [row] = await query<DocumentRow>(
        `UPDATE kb_documents
            SET document_id = $2, parent_id = $3, vector_status = 'pending',
                vector_queued_at = now(), vector_attempts = 0, vector_next_attempt_at = NULL,
                vector_error = NULL, vector_revision = NULL, vector_lease_id = NULL,
                vector_lease_expires_at = NULL
          WHERE document_id = $1
         RETURNING ${COLUMNS}`,
        [from, to, parentOfTo],
      );
      // Its links are read again from its new folder (the trigger moved its row along).
      const [keys, labels] = linkParameters(linksAt(to, row.body));
      await query(
        keys === null
          ? `DELETE FROM kb_links WHERE source_id = $1`
          : `INSERT INTO kb_links (source_id, keys, labels)
             VALUES ($1, string_to_array($2, E'\\x1f'), string_to_array($3, E'\\x1f'))
             ON CONFLICT (source_id) DO UPDATE SET keys = EXCLUDED.keys, labels = EXCLUDED.labels`,
        keys === null ? [to] : [to, keys, labels],
      );
      await query(`UPDATE kb_document_snapshots SET document_id = $2 WHERE document_id = $1`, [
        from,
        to,
      ]);
      await query(`UPDATE kb_audit SET document_id = $2 WHERE document_id = $1`, [from, to]);
      await query(
        `INSERT INTO kb_audit (operation, document_id, revision, actor)
         VALUES ('moved-away', $1, $3, $4), ('move', $2, $3, $4)`,
        [from, to, row.revision, actor],
      );
      // The old id is gone (a store without foreign keys drops its points), the new one waits.
      await query(
        `SELECT pg_notify('kb_vector_sync', json_build_object('op', 'delete', 'document_id', $1::text)::text),
                pg_notify('kb_vector_sync', json_build_object('op', 'update', 'document_id', $2::text,
                                                              'revision', $3::integer)::text)`,
        [from, to, row.revision],
      );
      return { kind: 'moved', row } as const;
    });
  }

  /**
   * The alive documents among `ids` with their bodies, each row locked until the transaction
   * this runs in ends (in byte order of id, so that two transactions locking some of the same
   * rows wait for each other rather than deadlock).
   */
  async lockAlive(
    ids: readonly string[],
  ): Promise<Array<Pick<DocumentRow, 'document_id' | 'title' | 'body' | 'revision'>>> {
    if (ids.length === 0) return [];
    return this.statements.query(
      'kb_documents_lock_alive',
      `SELECT document_id, title, body, revision FROM kb_documents
        WHERE document_id = ANY($1::text[]) AND deleted_at IS NULL
        ORDER BY document_id
          FOR UPDATE`,
      [ids],
    );
  }

  /**
   * Writes new bodies of documents (with their links), each only if still at `revision`: one
   * statement for all, audited and snapshotted as any update, each document's revision grows
   * by one. Returns the ids written.
   */
  async rewriteBodies(
    documents: ReadonlyArray<{
      documentId: string;
      body: string;
      contentHash: string;
      revision: number;
      links: LinkRow | null;
    }>,
    actor: string,
  ): Promise<string[]> {
    if (documents.length === 0) return [];
    const links = documents.map((d) => linkParameters(d.links));
    const rows = await this.write(
      'kb_documents_rewrite_bodies',
      actor,
      `${ACTOR},
       written AS (
         UPDATE kb_documents d
            SET body = r.body, content_hash = r.content_hash, revision = d.revision + 1
           FROM actor,
                unnest($1::text[], $2::text[], $3::text[], $4::integer[])
                AS r(document_id, body, content_hash, revision)
          WHERE d.document_id = r.document_id AND d.revision = r.revision
            AND d.deleted_at IS NULL
         RETURNING d.document_id),
       ${linksOf(`(SELECT l.* FROM unnest($1::text[], $5::text[], $6::text[])
                     AS l(document_id, keys, labels)
                    WHERE l.document_id IN (SELECT document_id FROM written))`)}
       SELECT document_id FROM written`,
      [
        documents.map((d) => d.documentId),
        documents.map((d) => d.body),
        documents.map((d) => d.contentHash),
        documents.map((d) => d.revision),
        links.map(([keys]) => keys),
        links.map(([, labels]) => labels),
      ],
    );
    return rows.map((row) => row.document_id);
  }

  /** Records a write the access policy refused, in the audit trail (`refused:<operation>`). */
  async recordRefusal(operation: string, documentId: string, actor: string): Promise<void> {
    await this.statements.write(
      'kb_audit_record_refusal',
      `INSERT INTO kb_audit (operation, document_id, revision, actor) VALUES ($1, $2, NULL, $3)`,
      [`refused:${operation}`, documentId, actor],
    );
  }

  /**
   * Inserts a document, or revives a soft-deleted one with the new content (its revision
   * continues). Returns `null`, writing nothing, when an alive document has the id.
   */
  async insertOrRevive(
    documentId: string,
    parentId: string | null,
    content: DocumentContent,
    links: LinkRow | null,
    actor: string,
  ): Promise<DocumentRow | null> {
    const rows = await this.write(
      'kb_documents_insert_or_revive',
      actor,
      `${ACTOR},
       written AS (
         INSERT INTO kb_documents (document_id, parent_id, title, tags, body, metadata, content_hash)
           SELECT $1, $2, $3, $4::text[], $5, $6::jsonb, $7 FROM actor
           ${REVIVE}
           RETURNING ${COLUMNS_BUT_BODY}),
       ${linksOf(`(SELECT document_id, $8::text AS keys, $9::text AS labels FROM written)`)}
       SELECT * FROM written`,
      [
        documentId,
        parentId,
        content.title,
        content.tags,
        content.body,
        JSON.stringify(content.metadata),
        content.content_hash,
        ...linkParameters(links),
      ],
    );
    return rows[0] ? { ...rows[0], body: content.body } : null;
  }

  /**
   * Applies `changes` to an alive document in one statement, only when they change
   * something and, if `expectedRevision` is given, only when it is still current (an atomic
   * compare-and-set: concurrent writers with the same expectation cannot both win). The
   * metadata keys in `stamps` are left out of the comparison (written along with a change,
   * never a change themselves). Returns the new row, or `null` when nothing was written;
   * {@link findState} tells why.
   */
  async updateIfChanged(
    documentId: string,
    changes: DocumentChanges,
    expectedRevision: number | undefined,
    actor: string,
    stamps: readonly string[] = [],
  ): Promise<DocumentRow | null> {
    const rows = await this.write(
      'kb_documents_update',
      actor,
      `${ACTOR},
       written AS (
         UPDATE kb_documents
            SET body = COALESCE($2, body),
                title = COALESCE($3, title),
                tags = COALESCE($4::text[], tags),
                metadata = COALESCE($5::jsonb, metadata),
                content_hash = COALESCE($6, content_hash),
                revision = revision + 1
           FROM actor
          WHERE document_id = $1
            AND deleted_at IS NULL
            AND ($7::integer IS NULL OR revision = $7::integer)
            AND (body, title, tags, metadata - $8::text[]) IS DISTINCT FROM
                (COALESCE($2, body), COALESCE($3, title), COALESCE($4::text[], tags),
                 COALESCE($5::jsonb, metadata) - $8::text[])
         RETURNING ${COLUMNS_BUT_BODY}, CASE WHEN $2::text IS NULL THEN body END AS body),
       ${linksOf(`(SELECT document_id, $9::text AS keys, $10::text AS labels FROM written)`)}
       SELECT * FROM written`,
      [
        documentId,
        changes.body ?? null,
        changes.title ?? null,
        changes.tags ?? null,
        changes.metadata === undefined ? null : JSON.stringify(changes.metadata),
        changes.content_hash ?? null,
        expectedRevision ?? null,
        stamps,
        ...linkParameters(changes.links ?? null),
      ],
    );
    // The body comes back only when it was not among the changes.
    return rows[0] ? { ...rows[0], body: rows[0].body ?? changes.body! } : null;
  }

  /** Soft-deletes an alive document (conditionally on its revision when given). */
  async softDelete(
    documentId: string,
    expectedRevision: number | undefined,
    actor: string,
  ): Promise<DocumentRow | null> {
    const rows = await this.write(
      'kb_documents_soft_delete',
      actor,
      `${ACTOR}
       UPDATE kb_documents SET deleted_at = now(), revision = revision + 1
           FROM actor
          WHERE document_id = $1 AND deleted_at IS NULL
            AND ($2::integer IS NULL OR revision = $2::integer)
         RETURNING ${COLUMNS}`,
      [documentId, expectedRevision ?? null],
    );
    return rows[0] ?? null;
  }

  /** Brings a soft-deleted document back as it was when deleted. */
  async undelete(documentId: string, actor: string): Promise<DocumentRow | null> {
    const rows = await this.write(
      'kb_documents_undelete',
      actor,
      `${ACTOR}
       UPDATE kb_documents SET deleted_at = NULL, revision = revision + 1
           FROM actor
          WHERE document_id = $1 AND deleted_at IS NOT NULL
         RETURNING ${COLUMNS}`,
      [documentId],
    );
    return rows[0] ?? null;
  }

  /**
   * Makes the content of snapshot `revision` the current content (alive, next revision).
   * When the document already holds that content nothing is written and the current row is
   * returned with `changed: false`. Returns `null` when no such snapshot exists.
   */
  async restoreSnapshot(
    documentId: string,
    snapshot: { id: string; links: LinkRow | null },
    actor: string,
  ): Promise<{ row: DocumentRow; changed: boolean } | null> {
    const rows = await this.write(
      'kb_documents_restore_snapshot',
      actor,
      `${ACTOR},
       -- The audit trigger records this update as a restore (it spends the setting).
       operation AS (SELECT set_config('app.operation', 'restore', true)),
       snapshot AS (
           SELECT title, tags, body, metadata, content_hash FROM kb_document_snapshots
            WHERE id = $2::bigint AND document_id = $1),
       restored AS (
         UPDATE kb_documents d
            SET title = s.title, tags = s.tags, body = s.body, metadata = s.metadata,
                content_hash = s.content_hash, deleted_at = NULL, revision = d.revision + 1
           FROM snapshot s, actor, operation
          WHERE d.document_id = $1
            AND (d.title, d.tags, d.body, d.metadata, d.deleted_at)
                IS DISTINCT FROM (s.title, s.tags, s.body, s.metadata, NULL)
         RETURNING d.*),
       ${linksOf(`(SELECT document_id, $3::text AS keys, $4::text AS labels FROM restored)`)}
       SELECT ${COLUMNS}, true AS changed FROM restored
       UNION ALL
       SELECT ${COLUMNS}, false AS changed FROM kb_documents
        WHERE document_id = $1 AND EXISTS (SELECT 1 FROM snapshot)
          AND NOT EXISTS (SELECT 1 FROM restored)`,
      [documentId, snapshot.id, ...linkParameters(snapshot.links)],
    );
    const first = rows[0] as (DocumentRow & { changed: boolean }) | undefined;
    if (!first) return null;
    const { changed, ...row } = first;
    return { row, changed };
  }

  /** The latest snapshot of `revision`, body included; `null` when there is none. */
  async snapshot(
    documentId: string,
    revision: number,
  ): Promise<(SnapshotBodyRow & { id: string }) | null> {
    const rows: Array<SnapshotBodyRow & { id: string }> = await this.dataSource.query(
      `SELECT id::text AS id, revision, title, tags, body, metadata, content_hash, deleted_at,
              reason, actor, snapshot_at
         FROM kb_document_snapshots
        WHERE document_id = $1 AND revision = $2
        ORDER BY id DESC
        LIMIT 1`,
      [documentId, revision],
    );
    return rows[0] ?? null;
  }

  /** Earlier versions, newest first. Bodies are left out (their size is given). */
  async history(documentId: string, limit: number, offset: number): Promise<SnapshotRow[]> {
    return this.dataSource.query(
      `SELECT revision, title, tags, octet_length(body) AS body_bytes, content_hash, deleted_at,
              reason, actor, snapshot_at
         FROM kb_document_snapshots
        WHERE document_id = $1
        ORDER BY revision DESC, id DESC
        LIMIT $2 OFFSET $3`,
      [documentId, limit + 1, offset],
    );
  }

  /**
   * Runs one writing statement whose audit and snapshot rows name `actor`, and returns the
   * rows of its RETURNING clause. The statement starts with {@link ACTOR} and reads from
   * `actor`, so the transaction-local `app.actor` is set before any row reaches a trigger:
   * one round trip, atomic on its own, instead of BEGIN / set_config / statement / COMMIT.
   * The actor is always the last parameter.
   */
  private write(
    name: string,
    actor: string,
    sql: string,
    params: unknown[],
  ): Promise<DocumentRow[]> {
    const text = sql.replace('$actor', `$${params.length + 1}`);
    return this.statements.write<DocumentRow>(name, text, [...params, actor]);
  }

  /** Id and title of the alive documents among `ids` (search results take titles from here). */
  async aliveTitles(
    ids: readonly string[],
    readable: Readable,
  ): Promise<{ document_id: string; title: string }[]> {
    if (ids.length === 0) return [];
    return this.dataSource.query(
      `SELECT document_id, title FROM kb_documents
        WHERE document_id = ANY($1::text[]) AND deleted_at IS NULL AND ${readableIds(2)}`,
      [ids, readable],
    );
  }
}
