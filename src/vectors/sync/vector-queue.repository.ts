import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { tryAdvisoryLock } from '../../database/advisory-lock';
import { escapeLike } from '../../documents/document-id';
import { type VectorStatus } from '../../documents/document.schemas';

/** A document held by the sync worker, and the token of its lease. */
export interface VectorLease {
  documentId: string;
  /** The lease token (a uuid); pass it back unchanged. */
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
  /** The lease token; pass it back unchanged. */
  lease: string;
}

/** A pending document the lexical pass reads, with its place in the queue. */
export interface LexicalWorkRow {
  document_id: string;
  revision: number;
  title: string;
  tags: string[];
  body: string;
  /**
   * Where it stands in the queue: the cursor of the next read starts after it. As PostgreSQL
   * writes it, to the microsecond: a Date's milliseconds would put the cursor before the rows
   * of its own millisecond, or (walking backwards) past them all.
   */
  queued_at: string;
}

/** A place in the queue of pending documents: queue time, then id. */
export interface QueueCursor {
  /** A `timestamptz` as PostgreSQL writes it (see LexicalWorkRow). */
  readonly queuedAt: string;
  readonly documentId: string;
}

/**
 * The vector sync queue: every statement that moves documents through the `vector_*`
 * columns of `kb_documents` (claims, leases and their renewal, completion, failures,
 * release, the recovery sweep, reindexing) and the reads the workers plan by. What the
 * queue holds, as the status endpoint and the gauges show it, is read by
 * {@link VectorQueueStatus} (vector-queue-status.repository.ts). These statements write only `vector_*` columns, so none of the
 * content triggers (touch, audit, snapshot, NOTIFY) fire; where other workers should wake
 * up, the statement sends its own notification.
 *
 * A lease is a token (`vector_lease_id`) and an expiry (`vector_lease_expires_at`): the
 * holder renews the expiry while it works, and every later statement of the holder matches
 * the token, so a document taken over after an expiry is never written by the old holder.
 */
@Injectable()
export class VectorQueueRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Claims up to `limit` pending documents, oldest first, for one worker: documents not
   * held under another worker's unexpired lease and past their retry time (a content change
   * resets `vector_attempts` to 0, which cancels any backoff). `FOR NO KEY UPDATE SKIP
   * LOCKED` lets several workers claim at once without waiting on, or taking, each other's
   * rows; the lease then keeps the document theirs until they finish, even across content
   * changes. Each claim counts one attempt.
   *
   * Not `FOR UPDATE`: that also skips a row some transaction merely references, since
   * writing a document's passages, lexical record or vectors locks its row `FOR KEY SHARE`
   * (their foreign keys) until it commits. A claim running beside such a write found nothing,
   * and a worker with nothing due then slept until the next notification, the document
   * pending meanwhile. A document's writer still takes `FOR UPDATE`, which this passes over:
   * a write's commit notifies the workers again, and for a row held by what then writes
   * nothing (a move refused, the links job) {@link nextWorkAt} has the worker look again soon.
   */
  async claim(limit: number, leaseMs: number): Promise<VectorWorkRow[]> {
    return this.returning<VectorWorkRow>(CLAIM_VECTOR_WORK_SQL, [limit, leaseMs]);
  }

  /**
   * Up to `limit` pending documents after `after` in queue order whose lexical record is not
   * that of their revision (under this analyzer), leaving out deleted ones and those whose id
   * starts with one of `skipped` (LIKE patterns). Reads the pending index from the cursor on:
   * the documents already indexed lexically and waiting to be embedded are passed once.
   * `newestFirst` walks the queue from its end backwards (`after` then means before): the
   * sync worker claims from its head, so the two meet in the middle rather than analysing
   * the same documents side by side.
   */
  async lexicalBehind(
    after: QueueCursor | null,
    analyzer: number,
    skipped: readonly string[],
    limit: number,
    newestFirst = false,
  ): Promise<LexicalWorkRow[]> {
    const [beyond, order] = newestFirst ? ['<', 'DESC'] : ['>', 'ASC'];
    return this.dataSource.query(
      `SELECT d.document_id, d.revision, d.title, d.tags, d.body,
              d.vector_queued_at::text AS queued_at
         FROM kb_documents d
        WHERE d.vector_status = 'pending'
          AND ($1::timestamptz IS NULL OR (d.vector_queued_at, d.document_id) ${beyond} ($1, $2::text))
          AND d.deleted_at IS NULL AND d.body <> ''
          AND NOT (d.document_id LIKE ANY($4::text[]))
          AND NOT EXISTS (SELECT 1 FROM kb_lexical_documents l
                           WHERE l.document_id = d.document_id AND l.revision >= d.revision
                             AND l.analyzer = $3)
        ORDER BY d.vector_queued_at ${order}, d.document_id ${order}
        LIMIT $5`,
      [after?.queuedAt ?? null, after?.documentId ?? null, analyzer, skipped, limit],
    );
  }

  /**
   * The lock of the pass that writes again the records another analyzer wrote, so that one
   * server of several does it: what releases it, or `undefined` when another holds it.
   */
  tryReanalysing(analyzer: number): Promise<(() => Promise<void>) | undefined> {
    // Named by the analyzer: a server of another release does not shut this one's out.
    return tryAdvisoryLock(this.dataSource, `agent-data:lexical-reanalysis:${analyzer}`);
  }

  /**
   * Up to `limit` documents after the id `after`, in id order, whose lexical record another
   * analyzer than `analyzer` wrote, leaving out deleted and empty ones and those whose id
   * starts with one of `skipped` (LIKE patterns), whatever their place in the queue. Read
   * through the partial index of the records of other analyzers than this release's (its
   * predicate is the version written out, so the statement writes it out too, for any plan
   * to use the index): a start with nothing to do reads no record.
   */
  async olderAnalyzer(
    after: string,
    analyzer: number,
    skipped: readonly string[],
    limit: number,
  ): Promise<LexicalWorkRow[]> {
    if (!Number.isSafeInteger(analyzer)) throw new Error(`not an analyzer version: ${analyzer}`);
    return this.dataSource.query(
      `SELECT d.document_id, d.revision, d.title, d.tags, d.body,
              d.vector_queued_at::text AS queued_at
         FROM kb_lexical_documents l JOIN kb_documents d ON d.document_id = l.document_id
        WHERE l.document_id > $1 AND l.analyzer <> ${analyzer}
          AND d.deleted_at IS NULL AND d.body <> ''
          AND NOT (d.document_id LIKE ANY($2::text[]))
        ORDER BY l.document_id
        LIMIT $3`,
      [after, skipped, limit],
    );
  }

  /**
   * Moves the expiry of leases still held to `leaseMs` from now. Returns the documents whose
   * lease was renewed; the others were taken over (or ended) meanwhile.
   */
  async renew(leases: readonly VectorLease[], leaseMs: number): Promise<Set<string>> {
    if (leases.length === 0) return new Set();
    const rows: { document_id: string }[] = await this.dataSource.query(
      `UPDATE kb_documents d
          SET vector_lease_expires_at = clock_timestamp() + make_interval(secs => $3::float8 / 1000)
         FROM unnest($1::text[], $2::uuid[]) AS l(document_id, lease)
        WHERE d.document_id = l.document_id AND d.vector_lease_id = l.lease
       RETURNING d.document_id`,
      [leases.map((l) => l.documentId), leases.map((l) => l.lease), leaseMs],
    );
    return new Set(rows.map((row) => row.document_id));
  }

  /** Current revisions of the documents among `leases` still held; lost ones are absent. */
  async leaseRevisions(leases: readonly VectorLease[]): Promise<Map<string, number>> {
    if (leases.length === 0) return new Map();
    const rows: { document_id: string; revision: number }[] = await this.dataSource.query(
      `SELECT d.document_id, d.revision
         FROM kb_documents d
         JOIN unnest($1::text[], $2::uuid[]) AS l(document_id, lease)
           ON d.document_id = l.document_id AND d.vector_lease_id = l.lease`,
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
  async complete(
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
              vector_claimed_at = NULL, vector_lease_id = NULL, vector_lease_expires_at = NULL,
              vector_next_attempt_at = NULL
         FROM unnest($1::text[], $2::integer[], $3::uuid[], $4::text[])
              AS w(document_id, revision, lease, status)
        WHERE d.document_id = w.document_id AND d.vector_lease_id = w.lease
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
   * Records a failed attempt and ends the lease: the document is retried after `retryMs`, or
   * becomes `error` once it has had `maxAttempts` attempts (the recovery sweep gives it one
   * more attempt on its next run). A document whose content changed meanwhile is simply
   * released: its new revision starts afresh.
   */
  async fail(
    lease: VectorLease & { revision: number },
    message: string,
    options: { maxAttempts: number; retryMs: number },
  ): Promise<'retry' | 'error' | 'stale' | 'lost'> {
    const rows = await this.returning<{ vector_status: VectorStatus; current: boolean }>(
      `UPDATE kb_documents
          SET vector_status = CASE WHEN revision = $2 AND vector_attempts >= $5
                                   THEN 'error' ELSE vector_status END,
              vector_error = CASE WHEN revision = $2 THEN $4 ELSE vector_error END,
              vector_next_attempt_at = CASE
                WHEN revision <> $2 OR vector_attempts >= $5 THEN NULL
                ELSE clock_timestamp() + make_interval(secs => $6::float8 / 1000) END,
              vector_claimed_at = NULL, vector_lease_id = NULL, vector_lease_expires_at = NULL
        WHERE document_id = $1 AND vector_lease_id = $3::uuid
       RETURNING vector_status, revision = $2 AS current`,
      [
        lease.documentId,
        lease.revision,
        lease.lease,
        message,
        options.maxAttempts,
        options.retryMs,
      ],
    );
    if (rows.length === 0) return 'lost';
    if (!rows[0].current) return 'stale';
    return rows[0].vector_status === 'error' ? 'error' : 'retry';
  }

  /**
   * Gives leased documents back to the queue without counting the attempt (a worker
   * stopping, a database or embedder outage), and wakes the other workers. Returns how many
   * were released.
   */
  async release(leases: readonly VectorLease[]): Promise<number> {
    if (leases.length === 0) return 0;
    const rows: { released: number }[] = await this.dataSource.query(
      `WITH released AS (
         UPDATE kb_documents d
            SET vector_claimed_at = NULL, vector_lease_id = NULL, vector_lease_expires_at = NULL,
                vector_attempts = GREATEST(d.vector_attempts - 1, 0)
           FROM unnest($1::text[], $2::uuid[]) AS l(document_id, lease)
          WHERE d.document_id = l.document_id AND d.vector_lease_id = l.lease
         RETURNING 1)
       SELECT count(*)::int AS released,
              CASE WHEN count(*) > 0 THEN pg_notify('kb_vector_sync', '{"op":"release"}') END
         FROM released`,
      [leases.map((l) => l.documentId), leases.map((l) => l.lease)],
    );
    return rows[0].released;
  }

  /**
   * The recovery sweep, in one statement: ends expired leases (their holder died), gives
   * every document in `error` one more attempt, and re-queues `ready` documents whose
   * embedded revision is behind. Each part reads a small partial index.
   */
  async requeue(maxAttempts: number): Promise<{ expired: number; errors: number; behind: number }> {
    const rows: { expired: number; errors: number; behind: number }[] = await this.dataSource.query(
      `WITH expired AS (
         UPDATE kb_documents
            SET vector_claimed_at = NULL, vector_lease_id = NULL, vector_lease_expires_at = NULL
          WHERE vector_lease_expires_at < clock_timestamp()
         RETURNING 1),
       errors AS (
         UPDATE kb_documents
            SET vector_status = 'pending', vector_queued_at = now(),
                vector_attempts = GREATEST($1::integer - 1, 0), vector_next_attempt_at = NULL
          WHERE vector_status = 'error'
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
   * Gives documents waiting out a backoff their next attempt now (the embedder or the
   * database came back: what failed may well work), and wakes the workers.
   */
  async retryNow(): Promise<number> {
    const rows: { queued: number }[] = await this.dataSource.query(
      `WITH queued AS (
         UPDATE kb_documents SET vector_next_attempt_at = NULL
          WHERE vector_status = 'pending' AND vector_next_attempt_at > clock_timestamp()
         RETURNING 1)
       SELECT count(*)::int AS queued,
              CASE WHEN count(*) > 0 THEN pg_notify('kb_vector_sync', '{"op":"retry"}') END
         FROM queued`,
    );
    return rows[0].queued;
  }

  /**
   * Queues every document, or those whose id starts with `prefix`, for embedding again
   * (deleted ones too: their vectors are removed again) and wakes the workers.
   * `readable`: LIKE patterns of the folders the caller may read (null: all).
   */
  async requeueAll(prefix: string, readable: readonly string[] | null = null): Promise<number> {
    const rows: { queued: number }[] = await this.dataSource.query(
      `WITH queued AS (
         UPDATE kb_documents
            SET vector_status = 'pending', vector_queued_at = now(), vector_attempts = 0,
                vector_next_attempt_at = NULL, vector_error = NULL
          WHERE ($1 = '' OR document_id LIKE $2 ESCAPE '\\')
            AND ($3::text[] IS NULL OR document_id LIKE ANY($3::text[]))
         RETURNING 1)
       SELECT count(*)::int AS queued,
              CASE WHEN count(*) > 0 THEN pg_notify('kb_vector_sync', '{"op":"reindex"}') END
         FROM queued`,
      [prefix, `${escapeLike(prefix)}%`, readable],
    );
    return rows[0].queued;
  }

  /**
   * When the next pending document becomes claimable: its retry time, or the expiry of a
   * lease another worker holds. A pending document claimable already, which the claim just
   * before this passed over, is held by some transaction ({@link claim}): it is looked at
   * again `lockedRecheckMs` from now, since a transaction that writes nothing notifies no one.
   * `null` when nothing is pending. Reads the partial index of pending documents.
   */
  async nextWorkAt(lockedRecheckMs: number): Promise<Date | null> {
    const rows: { at: Date | null }[] = await this.dataSource.query(
      `SELECT min(CASE WHEN w.at > clock_timestamp() THEN w.at
                       ELSE clock_timestamp() + make_interval(secs => $1::float8 / 1000) END) AS at
         FROM kb_documents,
              LATERAL (SELECT GREATEST(CASE WHEN vector_attempts > 0 THEN vector_next_attempt_at END,
                                       vector_lease_expires_at) AS at) w
        WHERE vector_status = 'pending'`,
      [lockedRecheckMs],
    );
    return rows[0]?.at ?? null;
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
     FOR NO KEY UPDATE SKIP LOCKED)
  UPDATE kb_documents d
     SET vector_claimed_at = clock_timestamp(),
         vector_lease_id = gen_random_uuid(),
         vector_lease_expires_at = clock_timestamp() + make_interval(secs => $2::float8 / 1000),
         vector_attempts = d.vector_attempts + 1
    FROM next
   WHERE d.document_id = next.document_id
  RETURNING d.document_id, d.revision, d.title, d.tags, d.body,
            d.deleted_at IS NOT NULL AS deleted, d.vector_attempts AS attempts,
            d.vector_lease_id::text AS lease`;
