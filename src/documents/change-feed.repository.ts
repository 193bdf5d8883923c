import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { readableIds, type Readable } from './access';
import type { Change } from './document.schemas';

/** A row of the feed as the driver gives it: the bigint id as text, the time as a Date. */
export type ChangeRow = Omit<Change, 'id' | 'at'> & { id: string; at: Date };

/** Which rows of the audit trail a page of the feed holds; `null` leaves a condition out. */
export interface ChangeFilter {
  /** Ids at or above (`from`) and below (`to`, `null`: no bound) in byte order. */
  readonly from: string | null;
  readonly to: string | null;
  readonly actor: string | null;
  readonly operation: string | null;
  /** ISO 8601 times: `at >= since`, `at < until`. */
  readonly since: string | null;
  readonly until: string | null;
  /** Rows below this id (a keyset cursor), as decimal text. */
  readonly before: string | null;
}

/**
 * The audit trail (`kb_audit`) as a feed, newest first by id. The table is the documents
 * module's: the triggers of migrations/ and DocumentsRepository write it.
 */
@Injectable()
export class ChangeFeedRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Up to `limit` rows matching `filter` that the caller may read, by id descending: a
   * keyset page, so a deep page costs what the first does.
   */
  async page(filter: ChangeFilter, limit: number, readable: Readable): Promise<ChangeRow[]> {
    const [text, values] = this.pageQueryForExplain(filter, limit, readable);
    return this.dataSource.query(text, values);
  }

  /**
   * The exact query and parameters {@link page} runs, for EXPLAIN in tests. It is run
   * unprepared, so PostgreSQL plans it with the values: an absent condition (`$n IS NULL`)
   * folds away, and the planner picks the index the given ones favour — the primary key
   * backwards, `(document_id, id)` for a narrow folder, `(actor, id)`, `(operation, id)`, or
   * `(at)` for a window far from the newest rows. One generic plan could not serve them all.
   */
  pageQueryForExplain(
    filter: ChangeFilter,
    limit: number,
    readable: Readable = null,
  ): [string, unknown[]] {
    return [
      `SELECT id, operation, document_id, revision, actor, at FROM kb_audit
        WHERE ($1::bigint IS NULL OR id < $1::bigint)
          AND ($2::text IS NULL OR document_id >= $2::text)
          AND ($3::text IS NULL OR document_id < $3::text)
          AND ($4::text IS NULL OR actor = $4::text)
          AND ($5::text IS NULL OR operation = $5::text)
          AND ($6::timestamptz IS NULL OR at >= $6::timestamptz)
          AND ($7::timestamptz IS NULL OR at < $7::timestamptz)
          AND ${readableIds(8)}
        ORDER BY id DESC
        LIMIT $9`,
      [
        filter.before,
        filter.from,
        filter.to,
        filter.actor,
        filter.operation,
        filter.since,
        filter.until,
        readable,
        limit,
      ],
    ];
  }
}
