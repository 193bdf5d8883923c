import { Injectable } from '@nestjs/common';
import { DataSource, QueryFailedError } from 'typeorm';
import { DatabaseError, type Pool } from 'pg';
import { isDatabaseUnavailable } from '../database/database-errors';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { escapeLike, prefixUpperBound } from './document-id';

export type VectorStatus = 'pending' | 'ready' | 'error' | 'skipped' | 'removed';

/** A document row as the service sees it. */
export interface DocumentRow {
  document_id: string;
  parent_id: string | null;
  title: string;
  tags: string[];
  body: string;
  metadata: Record<string, unknown>;
  revision: number;
  content_hash: string;
  vector_status: VectorStatus;
  vector_revision: number | null;
  vector_error: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export type DocumentSummaryRow = Pick<
  DocumentRow,
  'document_id' | 'parent_id' | 'title' | 'tags' | 'revision' | 'updated_at'
>;

/** A row of a keyset page: what an MCP resource listing shows, with the body's size in bytes. */
export type DocumentPageRow = Pick<DocumentRow, 'document_id' | 'title' | 'revision'> & {
  /** ISO 8601, UTC, milliseconds. */
  updated_at: string;
  size: number;
};

export interface DocumentContent {
  body: string;
  title: string;
  tags: string[];
  metadata: Record<string, unknown>;
  content_hash: string;
}

/** Fields of an update; `undefined` keeps the stored value. */
export type DocumentChanges = Partial<DocumentContent>;

export interface SnapshotRow {
  revision: number;
  title: string;
  tags: string[];
  body_bytes: number;
  content_hash: string;
  deleted_at: Date | null;
  reason: string;
  actor: string;
  snapshot_at: Date;
}

/**
 * Leading CTE of every writing statement: sets the transaction-local `app.actor` read by
 * the audit and snapshot triggers. `$actor` is replaced by the actor's parameter number.
 */
const ACTOR = `WITH actor AS (SELECT set_config('app.actor', $actor::text, true))`;

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
  constructor(private readonly dataSource: DataSource) {}

  /**
   * One page of alive documents in byte order of id, starting with `prefix`. Reads at most
   * `limit + 1` rows (the extra one only tells whether more follow) through the partial
   * index `kb_documents_alive_id`.
   */
  async list(prefix: string, limit: number, offset: number): Promise<DocumentSummaryRow[]> {
    const [text, values, name] = this.listStatement(prefix, limit, offset);
    // The generic plan of the named statement is an index range scan: the bounds are parameters.
    return this.prepared<DocumentSummaryRow>(name, text, values);
  }

  /** The exact query and parameters {@link list} runs, for EXPLAIN in tests. */
  listQueryForExplain(prefix: string, limit: number, offset: number): [string, unknown[]] {
    const [text, values] = this.listStatement(prefix, limit, offset);
    return [text, values];
  }

  private listStatement(
    prefix: string,
    limit: number,
    offset: number,
  ): [string, unknown[], string] {
    const upper = prefix === '' ? null : prefixUpperBound(prefix);
    if (prefix === '') {
      return [
        `SELECT document_id, parent_id, title, tags, revision, updated_at
           FROM kb_documents
          WHERE deleted_at IS NULL
          ORDER BY document_id
          LIMIT $1 OFFSET $2`,
        [limit + 1, offset],
        'kb_documents_list',
      ];
    }
    if (upper === null) {
      return [
        `SELECT document_id, parent_id, title, tags, revision, updated_at
           FROM kb_documents
          WHERE deleted_at IS NULL AND document_id >= $1 AND document_id LIKE $2 ESCAPE '\\'
          ORDER BY document_id
          LIMIT $3 OFFSET $4`,
        [prefix, `${escapeLike(prefix)}%`, limit + 1, offset],
        'kb_documents_list_open_prefix',
      ];
    }
    // The range selects exactly the ids starting with the prefix; LIKE (wildcards escaped)
    // says the same in words and costs one comparison per returned row.
    return [
      `SELECT document_id, parent_id, title, tags, revision, updated_at
         FROM kb_documents
        WHERE deleted_at IS NULL AND document_id >= $1 AND document_id < $2
          AND document_id LIKE $3 ESCAPE '\\'
        ORDER BY document_id
        LIMIT $4 OFFSET $5`,
      [prefix, upper, `${escapeLike(prefix)}%`, limit + 1, offset],
      'kb_documents_list_prefix',
    ];
  }

  /**
   * Up to `limit` alive documents with an id above `after` (from the start when `null`), in
   * byte order: a keyset page, so a deep page costs what the first one does. Reads the index
   * range and the rows returned, never the table.
   */
  async pageAfter(after: string | null, limit: number): Promise<DocumentPageRow[]> {
    const [text, values, name] = this.pageStatement(after, limit);
    return this.prepared<DocumentPageRow>(name, text, values);
  }

  /** The exact query and parameters {@link pageAfter} runs, for EXPLAIN in tests. */
  pageQueryForExplain(after: string | null, limit: number): [string, unknown[]] {
    const [text, values] = this.pageStatement(after, limit);
    return [text, values];
  }

  private pageStatement(after: string | null, limit: number): [string, unknown[], string] {
    // octet_length reads the stored length of a TOASTed body, not the body itself. The time
    // comes as the ISO 8601 text the API shows (what Date#toISOString gives), not as a
    // timestamp for the driver to parse into a Date and the service to format again.
    const columns = `document_id, title, revision,
      to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at,
      octet_length(body) AS size`;
    if (after === null) {
      return [
        `SELECT ${columns} FROM kb_documents
          WHERE deleted_at IS NULL ORDER BY document_id LIMIT $1`,
        [limit],
        'kb_documents_page_first',
      ];
    }
    return [
      `SELECT ${columns} FROM kb_documents
        WHERE deleted_at IS NULL AND document_id > $1 ORDER BY document_id LIMIT $2`,
      [after, limit],
      'kb_documents_page_after',
    ];
  }

  /**
   * Up to `limit` alive ids starting with `prefix`, in byte order: a range of the id index,
   * reading no more entries than it returns.
   */
  async idsWithPrefix(prefix: string, limit: number): Promise<string[]> {
    const [text, values, name] = this.idsStatement(prefix, limit);
    const rows = await this.prepared<{ document_id: string }>(name, text, values);
    return rows.map((row) => row.document_id);
  }

  idsQueryForExplain(prefix: string, limit: number): [string, unknown[]] {
    const [text, values] = this.idsStatement(prefix, limit);
    return [text, values];
  }

  private idsStatement(prefix: string, limit: number): [string, unknown[], string] {
    const upper = prefixUpperBound(prefix);
    if (upper === null) {
      return [
        `SELECT document_id FROM kb_documents
          WHERE deleted_at IS NULL AND document_id >= $1 ORDER BY document_id LIMIT $2`,
        [prefix, limit],
        'kb_documents_ids_from',
      ];
    }
    return [
      `SELECT document_id FROM kb_documents
        WHERE deleted_at IS NULL AND document_id >= $1 AND document_id < $2
        ORDER BY document_id LIMIT $3`,
      [prefix, upper, limit],
      'kb_documents_ids_range',
    ];
  }

  /**
   * Up to `limit` distinct folders that extend `prefix` by at most one segment, in byte
   * order of `folder/`: for `prefix` "kb/re" and documents under kb/reports/2024/ and
   * kb/research/, the folders "kb/reports" and "kb/research". A skip scan over the index of
   * alive folders (`parent_id || '/'`): every key of a folder's subtree starts with
   * `folder/`, so the next folder is the first key from `folder0` on ("0" follows "/").
   * One index probe per folder returned, however many documents a folder holds.
   */
  async foldersWithPrefix(prefix: string, limit: number): Promise<string[]> {
    const [text, values, name] = this.foldersStatement(prefix, limit);
    const rows = await this.prepared<{ folder: string }>(name, text, values);
    return rows.map((row) => row.folder);
  }

  foldersQueryForExplain(prefix: string, limit: number): [string, unknown[]] {
    const [text, values] = this.foldersStatement(prefix, limit);
    return [text, values];
  }

  private foldersStatement(prefix: string, limit: number): [string, unknown[], string] {
    const upper = prefixUpperBound(prefix);
    // The folder key k = parent_id || '/' cut after the first "/" that follows $1, "/" dropped.
    // Keys start strictly above $1: the key equal to "docs/" is the folder docs itself, which
    // does not extend the value "docs/".
    const folderOf = `left(k, char_length($1::text) + strpos(substr(k, char_length($1::text) + 1), '/') - 1)`;
    const below = upper === null ? '' : `AND parent_id || '/' < $2::text`;
    const limitParam = upper === null ? '$2' : '$3';
    const next = (from: string) =>
      `(SELECT ${folderOf} FROM (SELECT parent_id || '/' AS k FROM kb_documents
          WHERE deleted_at IS NULL AND parent_id || '/' ${from} ${below}
          ORDER BY parent_id || '/' LIMIT 1) first)`;
    return [
      `WITH RECURSIVE walk(folder, n) AS (
         SELECT ${next('> $1::text')}, 1
         UNION ALL
         SELECT ${next(`>= walk.folder || '0'`)}, walk.n + 1
           FROM walk WHERE walk.folder IS NOT NULL AND walk.n < ${limitParam}::int
       )
       SELECT folder FROM walk WHERE folder IS NOT NULL`,
      upper === null ? [prefix, limit] : [prefix, upper, limit],
      upper === null ? 'kb_documents_folders_from' : 'kb_documents_folders_range',
    ];
  }

  async findAlive(documentId: string): Promise<DocumentRow | null> {
    const rows = await this.prepared<DocumentRow>(
      'kb_documents_find_alive',
      `SELECT ${COLUMNS} FROM kb_documents WHERE document_id = $1 AND deleted_at IS NULL`,
      [documentId],
    );
    return rows[0] ?? null;
  }

  /** Alive documents among `ids`, in no particular order. */
  async findManyAlive(ids: readonly string[]): Promise<DocumentRow[]> {
    if (ids.length === 0) return [];
    return this.prepared<DocumentRow>(
      'kb_documents_find_many_alive',
      `SELECT ${COLUMNS} FROM kb_documents WHERE document_id = ANY($1::text[]) AND deleted_at IS NULL`,
      [ids],
    );
  }

  /** Revision and liveness of a document, deleted or not; `null` when it never existed. */
  async findState(documentId: string): Promise<{ revision: number; deleted: boolean } | null> {
    const rows: { revision: number; deleted: boolean }[] = await this.dataSource.query(
      `SELECT revision, deleted_at IS NOT NULL AS deleted FROM kb_documents WHERE document_id = $1`,
      [documentId],
    );
    return rows[0] ?? null;
  }

  /**
   * Inserts a document, or revives a soft-deleted one with the new content (its revision
   * continues). Returns `null`, writing nothing, when an alive document has the id.
   */
  async insertOrRevive(
    documentId: string,
    parentId: string | null,
    content: DocumentContent,
    actor: string,
  ): Promise<DocumentRow | null> {
    const rows = await this.write(
      'kb_documents_insert_or_revive',
      actor,
      `${ACTOR}
       INSERT INTO kb_documents (document_id, parent_id, title, tags, body, metadata, content_hash)
         SELECT $1, $2, $3, $4::text[], $5, $6::jsonb, $7 FROM actor
         ON CONFLICT (document_id) DO UPDATE
            SET parent_id = EXCLUDED.parent_id, title = EXCLUDED.title, tags = EXCLUDED.tags,
                body = EXCLUDED.body, metadata = EXCLUDED.metadata,
                content_hash = EXCLUDED.content_hash,
                revision = kb_documents.revision + 1, deleted_at = NULL
          WHERE kb_documents.deleted_at IS NOT NULL
         RETURNING ${COLUMNS_BUT_BODY}`,
      [
        documentId,
        parentId,
        content.title,
        content.tags,
        content.body,
        JSON.stringify(content.metadata),
        content.content_hash,
      ],
    );
    return rows[0] ? { ...rows[0], body: content.body } : null;
  }

  /**
   * Applies `changes` to an alive document in one statement, only when they change
   * something and, if `expectedRevision` is given, only when it is still current (an atomic
   * compare-and-set: concurrent writers with the same expectation cannot both win).
   * Returns the new row, or `null` when nothing was written; {@link findState} tells why.
   */
  async updateIfChanged(
    documentId: string,
    changes: DocumentChanges,
    expectedRevision: number | undefined,
    actor: string,
  ): Promise<DocumentRow | null> {
    const rows = await this.write(
      'kb_documents_update',
      actor,
      `${ACTOR}
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
            AND (body, title, tags, metadata) IS DISTINCT FROM
                (COALESCE($2, body), COALESCE($3, title), COALESCE($4::text[], tags), COALESCE($5::jsonb, metadata))
         RETURNING ${COLUMNS_BUT_BODY}, CASE WHEN $2::text IS NULL THEN body END AS body`,
      [
        documentId,
        changes.body ?? null,
        changes.title ?? null,
        changes.tags ?? null,
        changes.metadata === undefined ? null : JSON.stringify(changes.metadata),
        changes.content_hash ?? null,
        expectedRevision ?? null,
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
    revision: number,
    actor: string,
  ): Promise<{ row: DocumentRow; changed: boolean } | null> {
    const rows = await this.write(
      'kb_documents_restore_snapshot',
      actor,
      `${ACTOR},
       snapshot AS (
           SELECT title, tags, body, metadata, content_hash FROM kb_document_snapshots
            WHERE document_id = $1 AND revision = $2
            ORDER BY id DESC LIMIT 1),
       restored AS (
         UPDATE kb_documents d
            SET title = s.title, tags = s.tags, body = s.body, metadata = s.metadata,
                content_hash = s.content_hash, deleted_at = NULL, revision = d.revision + 1
           FROM snapshot s, actor
          WHERE d.document_id = $1
            AND (d.title, d.tags, d.body, d.metadata, d.deleted_at)
                IS DISTINCT FROM (s.title, s.tags, s.body, s.metadata, NULL)
         RETURNING d.*)
       SELECT ${COLUMNS}, true AS changed FROM restored
       UNION ALL
       SELECT ${COLUMNS}, false AS changed FROM kb_documents
        WHERE document_id = $1 AND EXISTS (SELECT 1 FROM snapshot)
          AND NOT EXISTS (SELECT 1 FROM restored)`,
      [documentId, revision],
    );
    const first = rows[0] as (DocumentRow & { changed: boolean }) | undefined;
    if (!first) return null;
    const { changed, ...row } = first;
    return { row, changed };
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
   * Runs a hot read as a named prepared statement on the pool: parsed once per connection,
   * and planned once (generic plan) instead of on every call.
   */
  private async prepared<T extends object>(
    name: string,
    text: string,
    values: unknown[],
  ): Promise<T[]> {
    const pool = (this.dataSource.driver as PostgresDriver).master as Pool;
    const client = await pool.connect();
    let broken: Error | undefined;
    // A checked-out client has no listener of the pool's: a connection that fails while
    // no statement runs on it (PostgreSQL restarting just before the query, or just after)
    // emits 'error', which must not go unheard (it would end the process). pg-pool's own
    // query() listens the same way.
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      return (await client.query<T>({ name, text, values })).rows;
    } catch (error) {
      // A statement PostgreSQL refused leaves its connection (and the statements prepared
      // on it) good for the next one; only a connection that failed is dropped. The pool's
      // own query() would drop it after any error, which a client could cause at will.
      if (!(error instanceof DatabaseError) || isDatabaseUnavailable(error)) {
        broken = error as Error;
      }
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  /**
   * Runs one writing statement whose audit and snapshot rows name `actor`, and returns the
   * rows of its RETURNING clause. The statement starts with {@link ACTOR} and reads from
   * `actor`, so the transaction-local `app.actor` is set before any row reaches a trigger:
   * one round trip, atomic on its own, instead of BEGIN / set_config / statement / COMMIT.
   * The actor is always the last parameter. It runs on the pool as a named prepared
   * statement named by its caller (parsed once per connection), without TypeORM's query
   * runner; a failure is wrapped as TypeORM's QueryFailedError, as the runner did, so the
   * error filters see what they saw before.
   */
  private async write(
    name: string,
    actor: string,
    sql: string,
    params: unknown[],
  ): Promise<DocumentRow[]> {
    const text = sql.replace('$actor', `$${params.length + 1}`);
    const values = [...params, actor];
    try {
      return await this.prepared<DocumentRow>(name, text, values);
    } catch (error) {
      throw new QueryFailedError(text, values, error as Error);
    }
  }

  /** Id and title of the alive documents among `ids` (search results take titles from here). */
  async aliveTitles(ids: readonly string[]): Promise<{ document_id: string; title: string }[]> {
    if (ids.length === 0) return [];
    return this.dataSource.query(
      `SELECT document_id, title FROM kb_documents
        WHERE document_id = ANY($1::text[]) AND deleted_at IS NULL`,
      [ids],
    );
  }
}
