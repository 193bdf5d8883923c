import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Pool } from 'pg';
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
         RETURNING ${COLUMNS}`,
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
    return rows[0] ?? null;
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
         RETURNING ${COLUMNS}`,
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
    return rows[0] ?? null;
  }

  /** Soft-deletes an alive document (conditionally on its revision when given). */
  async softDelete(
    documentId: string,
    expectedRevision: number | undefined,
    actor: string,
  ): Promise<DocumentRow | null> {
    const rows = await this.write(
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
   * Count and age (seconds) of the oldest document waiting for the sync pipeline, and the
   * count of documents in `error`. Both read partial indexes, never the whole table.
   */
  async pendingVectorWork(): Promise<{ pending: number; lagSeconds: number; errors: number }> {
    const rows: { pending: string; lag: number | null; errors: string }[] =
      await this.dataSource.query(
        `SELECT count(*) AS pending, EXTRACT(EPOCH FROM now() - min(vector_queued_at))::float8 AS lag,
                (SELECT count(*) FROM kb_documents WHERE vector_status = 'error') AS errors
           FROM kb_documents WHERE vector_status = 'pending'`,
      );
    return {
      pending: Number(rows[0].pending),
      lagSeconds: Math.max(0, rows[0].lag ?? 0),
      errors: Number(rows[0].errors),
    };
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
    return (await pool.query<T>({ name, text, values })).rows;
  }

  /**
   * Runs one writing statement whose audit and snapshot rows name `actor`, and returns the
   * rows of its RETURNING clause. The statement starts with {@link ACTOR} and reads from
   * `actor`, so the transaction-local `app.actor` is set before any row reaches a trigger:
   * one round trip, atomic on its own, instead of BEGIN / set_config / statement / COMMIT.
   * The actor is always the last parameter.
   */
  private async write(actor: string, sql: string, params: unknown[]): Promise<DocumentRow[]> {
    const runner = this.dataSource.createQueryRunner('master');
    try {
      const result = await runner.query(
        sql.replace('$actor', `$${params.length + 1}`),
        [...params, actor],
        true,
      );
      return result.records as DocumentRow[];
    } finally {
      await runner.release();
    }
  }

  // -------------------------------------------------------------------------------------
  // Vector sync bookkeeping, for the vectors module (worker, recovery sweep, admin
  // endpoints, search titles). These statements write only `vector_*` columns, so none of
  // the content triggers (touch, audit, snapshot, NOTIFY) fire; where other workers should
  // wake up, the statement sends its own notification.
  // -------------------------------------------------------------------------------------

  /**
   * Claims up to `limit` pending documents, oldest first, for one worker: documents not
   * held under another worker's unexpired lease and past their retry time (a content change
   * resets `vector_attempts` to 0, which cancels any backoff). `FOR UPDATE SKIP LOCKED` lets
   * several workers claim at once without waiting on, or taking, each other's rows; the
   * lease then keeps the document theirs until they finish, even across content changes.
   * Each claim counts one attempt. The lease's expiry, as text, is the holder's token.
   */
  async claimVectorWork(limit: number, leaseMs: number): Promise<VectorWorkRow[]> {
    return this.returning<VectorWorkRow>(CLAIM_VECTOR_WORK_SQL, [limit, leaseMs]);
  }

  /**
   * Current revisions of the documents among `leases` that are still held under their lease
   * (and not expired); documents whose lease was lost are absent.
   */
  async vectorLeaseRevisions(leases: readonly VectorLease[]): Promise<Map<string, number>> {
    if (leases.length === 0) return new Map();
    const rows: { document_id: string; revision: number }[] = await this.dataSource.query(
      `SELECT d.document_id, d.revision
         FROM kb_documents d
         JOIN unnest($1::text[], $2::timestamptz[]) AS l(document_id, lease)
           ON d.document_id = l.document_id AND d.vector_lease_expires_at = l.lease
        WHERE d.vector_lease_expires_at > clock_timestamp()`,
      [leases.map((l) => l.documentId), leases.map((l) => l.lease)],
    );
    return new Map(rows.map((r) => [r.document_id, r.revision]));
  }

  /**
   * Ends leases, each with its final status, in one statement: a document whose revision is
   * still the one processed gets the status; one whose content changed meanwhile stays
   * `pending` (to be redone) and only its lease ends. Per document: `done`, `stale`, or
   * `lost` when its lease was no longer held (nothing written).
   */
  async completeVectorWork(
    items: readonly (VectorLease & {
      revision: number;
      status: 'ready' | 'skipped' | 'removed';
    })[],
  ): Promise<Map<string, 'done' | 'stale' | 'lost'>> {
    const outcomes = new Map(items.map((i) => [i.documentId, 'lost' as 'done' | 'stale' | 'lost']));
    if (items.length === 0) return outcomes;
    const rows = await this.returning<{ document_id: string; current: boolean }>(
      `UPDATE kb_documents d
          SET vector_status = CASE WHEN d.revision = w.revision THEN w.status ELSE d.vector_status END,
              vector_revision = CASE WHEN d.revision = w.revision THEN w.revision ELSE d.vector_revision END,
              vector_error = CASE WHEN d.revision = w.revision THEN NULL ELSE d.vector_error END,
              vector_attempts = CASE WHEN d.revision = w.revision THEN 0 ELSE d.vector_attempts END,
              vector_claimed_at = NULL, vector_lease_expires_at = NULL, vector_next_attempt_at = NULL
         FROM unnest($1::text[], $2::integer[], $3::timestamptz[], $4::text[])
              AS w(document_id, revision, lease, status)
        WHERE d.document_id = w.document_id AND d.vector_lease_expires_at = w.lease
       RETURNING d.document_id, d.revision = w.revision AS current`,
      [
        items.map((i) => i.documentId),
        items.map((i) => i.revision),
        items.map((i) => i.lease),
        items.map((i) => i.status),
      ],
    );
    for (const row of rows) outcomes.set(row.document_id, row.current ? 'done' : 'stale');
    return outcomes;
  }

  /**
   * Records a failed attempt and ends the lease: the document is retried after `retryMs`,
   * or becomes `error` once it has had `maxAttempts` attempts (the sweep offers it one more
   * attempt after `errorRetryMs`). A document whose content changed meanwhile is simply
   * released: its new revision starts afresh.
   */
  async failVectorWork(
    documentId: string,
    revision: number,
    lease: string,
    message: string,
    options: { maxAttempts: number; retryMs: number; errorRetryMs: number },
  ): Promise<'retry' | 'error' | 'stale' | 'lost'> {
    const rows = await this.returning<{ vector_status: VectorStatus; current: boolean }>(
      `UPDATE kb_documents
          SET vector_status = CASE WHEN revision = $2 AND vector_attempts >= $5
                                   THEN 'error' ELSE vector_status END,
              vector_error = CASE WHEN revision = $2 THEN $4 ELSE vector_error END,
              vector_next_attempt_at = CASE
                WHEN revision <> $2 THEN NULL
                WHEN vector_attempts >= $5 THEN clock_timestamp() + make_interval(secs => $7::float8 / 1000)
                ELSE clock_timestamp() + make_interval(secs => $6::float8 / 1000) END,
              vector_claimed_at = NULL, vector_lease_expires_at = NULL
        WHERE document_id = $1 AND vector_lease_expires_at = $3::timestamptz
       RETURNING vector_status, revision = $2 AS current`,
      [
        documentId,
        revision,
        lease,
        message,
        options.maxAttempts,
        options.retryMs,
        options.errorRetryMs,
      ],
    );
    if (rows.length === 0) return 'lost';
    if (!rows[0].current) return 'stale';
    return rows[0].vector_status === 'error' ? 'error' : 'retry';
  }

  /**
   * Gives leased documents back to the queue without counting the attempt (a worker
   * stopping), and wakes the other workers. Returns how many were released.
   */
  async releaseVectorLeases(leases: readonly VectorLease[]): Promise<number> {
    if (leases.length === 0) return 0;
    const rows: { released: number }[] = await this.dataSource.query(
      `WITH released AS (
         UPDATE kb_documents d
            SET vector_claimed_at = NULL, vector_lease_expires_at = NULL,
                vector_attempts = GREATEST(d.vector_attempts - 1, 0)
           FROM unnest($1::text[], $2::timestamptz[]) AS l(document_id, lease)
          WHERE d.document_id = l.document_id AND d.vector_lease_expires_at = l.lease
         RETURNING 1)
       SELECT count(*)::int AS released,
              CASE WHEN count(*) > 0 THEN pg_notify('kb_vector_sync', '{"op":"release"}') END
         FROM released`,
      [leases.map((l) => l.documentId), leases.map((l) => l.lease)],
    );
    return rows[0].released;
  }

  /**
   * The recovery sweep, in one statement: ends expired leases (their holder died), offers
   * documents in `error` whose retry time has come one more attempt, and re-queues `ready`
   * documents whose embedded revision is behind. Each part reads a small partial index.
   */
  async requeueVectorWork(
    maxAttempts: number,
  ): Promise<{ expired: number; errors: number; behind: number }> {
    const rows: { expired: number; errors: number; behind: number }[] = await this.dataSource.query(
      `WITH expired AS (
         UPDATE kb_documents SET vector_claimed_at = NULL, vector_lease_expires_at = NULL
          WHERE vector_lease_expires_at < clock_timestamp()
         RETURNING 1),
       errors AS (
         UPDATE kb_documents
            SET vector_status = 'pending', vector_queued_at = now(),
                vector_attempts = GREATEST($1::integer - 1, 0), vector_next_attempt_at = NULL
          WHERE vector_status = 'error'
            AND (vector_next_attempt_at IS NULL OR vector_next_attempt_at <= clock_timestamp())
         RETURNING 1),
       behind AS (
         UPDATE kb_documents
            SET vector_status = 'pending', vector_queued_at = now(), vector_attempts = 0,
                vector_next_attempt_at = NULL, vector_error = NULL
          WHERE vector_status = 'ready' AND vector_revision IS DISTINCT FROM revision
         RETURNING 1),
       counts AS (
         SELECT (SELECT count(*) FROM expired)::int AS expired,
                (SELECT count(*) FROM errors)::int AS errors,
                (SELECT count(*) FROM behind)::int AS behind)
       SELECT expired, errors, behind,
              CASE WHEN expired + errors + behind > 0
                   THEN pg_notify('kb_vector_sync', '{"op":"sweep"}') END
         FROM counts`,
      [maxAttempts],
    );
    const { expired, errors, behind } = rows[0];
    return { expired, errors, behind };
  }

  /**
   * Queues every document, or those whose id starts with `prefix`, for embedding again
   * (deleted ones too: their vectors are removed again) and wakes the workers.
   */
  async requeueVectors(prefix: string): Promise<number> {
    const rows: { queued: number }[] = await this.dataSource.query(
      `WITH queued AS (
         UPDATE kb_documents
            SET vector_status = 'pending', vector_queued_at = now(), vector_attempts = 0,
                vector_next_attempt_at = NULL, vector_error = NULL
          WHERE $1 = '' OR document_id LIKE $2 ESCAPE '\\'
         RETURNING 1)
       SELECT count(*)::int AS queued,
              CASE WHEN count(*) > 0 THEN pg_notify('kb_vector_sync', '{"op":"reindex"}') END
         FROM queued`,
      [prefix, `${escapeLike(prefix)}%`],
    );
    return rows[0].queued;
  }

  /** Documents per vector status (every status present, 0 when none) and leases held. */
  async vectorStatusCounts(): Promise<{ counts: Record<VectorStatus, number>; leased: number }> {
    const rows: { vector_status: VectorStatus; count: number; leased: number }[] =
      await this.dataSource.query(
        `SELECT vector_status, count(*)::int AS count,
                count(*) FILTER (WHERE vector_lease_expires_at IS NOT NULL)::int AS leased
           FROM kb_documents GROUP BY vector_status`,
      );
    const counts: Record<VectorStatus, number> = {
      pending: 0,
      ready: 0,
      error: 0,
      skipped: 0,
      removed: 0,
    };
    let leased = 0;
    for (const row of rows) {
      counts[row.vector_status] = row.count;
      leased += row.leased;
    }
    return { counts, leased };
  }

  /**
   * When the next pending document becomes claimable: its retry time, or the expiry of a
   * lease another worker holds. `null` when nothing pending is waiting on either. Reads the
   * partial index of pending documents.
   */
  async nextVectorWorkAt(): Promise<Date | null> {
    const rows: { at: Date | null }[] = await this.dataSource.query(
      `SELECT min(GREATEST(
                CASE WHEN vector_attempts > 0 THEN vector_next_attempt_at END,
                vector_lease_expires_at)) AS at
         FROM kb_documents
        WHERE vector_status = 'pending'
          AND (vector_lease_expires_at > clock_timestamp()
               OR (vector_attempts > 0 AND vector_next_attempt_at > clock_timestamp()))`,
    );
    return rows[0]?.at ?? null;
  }

  /** Up to `limit` documents in `error`, the next to be retried first. */
  async vectorErrors(limit: number): Promise<VectorErrorRow[]> {
    return this.dataSource.query(
      `SELECT document_id, vector_error AS error, vector_attempts AS attempts,
              vector_next_attempt_at AS next_attempt_at
         FROM kb_documents WHERE vector_status = 'error'
        ORDER BY vector_next_attempt_at NULLS FIRST LIMIT $1`,
      [limit],
    );
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

  /** Runs one writing statement outside any transaction of ours and returns its RETURNING rows. */
  private async returning<T>(sql: string, params: unknown[]): Promise<T[]> {
    const runner = this.dataSource.createQueryRunner('master');
    await runner.connect();
    try {
      const result = await runner.query(sql, params, true);
      return result.records as T[];
    } finally {
      await runner.release();
    }
  }
}

/** The sync worker's claim (parameters: limit, lease in ms); exported for EXPLAIN in tests. */
export const CLAIM_VECTOR_WORK_SQL = `
  WITH next AS (
    SELECT document_id FROM kb_documents
     WHERE vector_status = 'pending'
       AND (vector_lease_expires_at IS NULL OR vector_lease_expires_at < clock_timestamp())
       AND (vector_attempts = 0 OR vector_next_attempt_at IS NULL
            OR vector_next_attempt_at <= clock_timestamp())
     ORDER BY vector_queued_at
     LIMIT $1
     FOR UPDATE SKIP LOCKED)
  UPDATE kb_documents d
     SET vector_claimed_at = clock_timestamp(),
         vector_lease_expires_at = clock_timestamp() + make_interval(secs => $2::float8 / 1000),
         vector_attempts = d.vector_attempts + 1
    FROM next
   WHERE d.document_id = next.document_id
  RETURNING d.document_id, d.revision, d.title, d.tags, d.body,
            d.deleted_at IS NOT NULL AS deleted, d.vector_attempts AS attempts,
            d.vector_lease_expires_at::text AS lease`;

/** A document held by the sync worker, and the token of its lease. */
export interface VectorLease {
  documentId: string;
  lease: string;
}

/** A document claimed by the sync worker. */
export interface VectorWorkRow {
  document_id: string;
  revision: number;
  title: string;
  tags: string[];
  body: string;
  deleted: boolean;
  /** Attempts so far, this one included. */
  attempts: number;
  /** The lease token (its expiry as PostgreSQL text); pass it back unchanged. */
  lease: string;
}

export interface VectorErrorRow {
  document_id: string;
  error: string | null;
  attempts: number;
  next_attempt_at: Date | null;
}
