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
 * Below this many audit rows, a folder's page is read through the folder's index and sorted:
 * a few milliseconds at most. Above, the primary key's walk finds a page among the newer rows
 * (at 6 000 rows a folder, sorting them took 50 ms a page in the bench).
 */
const FOLDER_SORTED_ROWS = 1_000;

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
    const [text, values] = await this.pageQueryForExplain(filter, limit, readable);
    return this.dataSource.query(text, values);
  }

  /**
   * The exact query and parameters {@link page} runs, for EXPLAIN in tests. It is run
   * unprepared, so PostgreSQL plans it with the values: an absent condition (`$n IS NULL`)
   * folds away, and the planner picks the index the given ones favour — the primary key
   * backwards, `(actor, id)`, `(operation, id)`, or `(at)` for a window far from the newest
   * rows. One generic plan could not serve them all.
   *
   * A folder is the exception the planner cannot see: it reckons a folder's rows spread evenly
   * over the ids, so for a narrow one it walks the primary key backwards until it has a page,
   * and a folder written long ago (an import, an archive) has its rows among the oldest: the
   * walk reads the whole table. A folder of fewer than {@link FOLDER_SORTED_ROWS} rows is
   * therefore read whole through `(document_id, id)` and sorted (a count bounded by that
   * number, on the same index, tells); a larger one is paged by the primary key, where a page
   * is found among the newer rows — unless the large folder too was last written long ago,
   * the one shape that still walks far (docs/documents.md, Change feed).
   */
  async pageQueryForExplain(
    filter: ChangeFilter,
    limit: number,
    readable: Readable = null,
  ): Promise<[string, unknown[]]> {
    const sorted =
      filter.from !== null && (await this.folderHoldsFewer(filter, FOLDER_SORTED_ROWS));
    const rows = `SELECT id, operation, document_id, revision, actor, at FROM kb_audit
        WHERE ($1::bigint IS NULL OR id < $1::bigint)
          AND ($2::text IS NULL OR document_id >= $2::text)
          AND ($3::text IS NULL OR document_id < $3::text)
          AND ($4::text IS NULL OR actor = $4::text)
          AND ($5::text IS NULL OR operation = $5::text)
          AND ($6::timestamptz IS NULL OR at >= $6::timestamptz)
          AND ($7::timestamptz IS NULL OR at < $7::timestamptz)
          AND ${readableIds(8)}`;
    return [
      sorted
        ? `WITH folder AS MATERIALIZED (${rows})
           SELECT * FROM folder ORDER BY id DESC LIMIT $9`
        : `${rows}
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

  /** Whether the folder of `filter` holds fewer than `most` rows below its cursor. */
  private async folderHoldsFewer(filter: ChangeFilter, most: number): Promise<boolean> {
    const [{ count }] = await this.dataSource.query(
      `SELECT count(*)::int AS count FROM (
         SELECT 1 FROM kb_audit
          WHERE document_id >= $1::text
            AND ($2::text IS NULL OR document_id < $2::text)
            AND ($3::bigint IS NULL OR id < $3::bigint)
          LIMIT $4) AS folder`,
      [filter.from, filter.to, filter.before, most],
    );
    return count < most;
  }
}
