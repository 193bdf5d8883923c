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
 * a few milliseconds at most. Above, the newest rows are walked first (at 6 000 rows a folder,
 * sorting them took 50 ms a page in the bench).
 */
const FOLDER_SORTED_ROWS = 1_000;

/**
 * How many of the newest rows a large folder's page walks before it reads the folder whole
 * instead: a folder that holds one row in 200 of the newest finds its page within them.
 */
const FOLDER_WALK_ROWS = 10_000;

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
    const chosen = await this.choose(filter, limit, readable);
    return chosen.rows ?? this.dataSource.query(chosen.text, chosen.values);
  }

  /**
   * The query and parameters whose answer is the page {@link page} returns, for EXPLAIN in
   * tests (after the statements that chose it have run: a folder's count, its walk).
   */
  async pageQueryForExplain(
    filter: ChangeFilter,
    limit: number,
    readable: Readable = null,
  ): Promise<[string, unknown[]]> {
    const { text, values } = await this.choose(filter, limit, readable);
    return [text, values];
  }

  /**
   * The statement of a page, and its rows when choosing it ran it. Each statement is run
   * unprepared, so PostgreSQL plans it with the values: an absent condition (`$n IS NULL`)
   * folds away, and the planner picks the index the given ones favour — the primary key
   * backwards, `(actor, id)`, `(operation, id)`, or `(at)` for a window far from the newest
   * rows. One generic plan could not serve them all.
   *
   * A folder is the exception the planner cannot see: it reckons a folder's rows spread evenly
   * over the ids, and chooses by the folder's size between walking the primary key backwards
   * until it has a page and reading the whole folder through `(document_id, id)` to sort it.
   * Either can be far worse than the other: a folder written long ago (an import, an archive)
   * has its rows among the oldest, where the walk reads the whole table; a large folder written
   * lately has its page among the newest rows, where reading the folder reads thousands of rows
   * at random, by estimates that know nothing of where the folder's rows lie. So the choice is
   * not the planner's. A folder of
   * fewer than {@link FOLDER_SORTED_ROWS} rows (a count bounded by that number, on the
   * folder's index, tells) is read whole and sorted. A larger one walks at most
   * {@link FOLDER_WALK_ROWS} of the newest rows; only if they hold no full page is the folder
   * read whole and sorted. A page thus reads at most that many rows plus the folder's, never
   * the table (docs/documents.md, Change feed).
   */
  private async choose(
    filter: ChangeFilter,
    limit: number,
    readable: Readable,
  ): Promise<{ text: string; values: unknown[]; rows?: ChangeRow[] }> {
    const values = [
      filter.before,
      filter.from,
      filter.to,
      filter.actor,
      filter.operation,
      filter.since,
      filter.until,
      readable,
      limit,
    ];
    const columns = 'id, operation, document_id, revision, actor, at';
    const below = '($1::bigint IS NULL OR id < $1::bigint)';
    const matching = `($2::text IS NULL OR document_id >= $2::text)
          AND ($3::text IS NULL OR document_id < $3::text)
          AND ($4::text IS NULL OR actor = $4::text)
          AND ($5::text IS NULL OR operation = $5::text)
          AND ($6::timestamptz IS NULL OR at >= $6::timestamptz)
          AND ($7::timestamptz IS NULL OR at < $7::timestamptz)
          AND ${readableIds(8)}`;
    const rows = `SELECT ${columns} FROM kb_audit WHERE ${below} AND ${matching}`;
    if (filter.from === null) return { text: `${rows} ORDER BY id DESC LIMIT $9`, values };
    const sorted = {
      text: `WITH folder AS MATERIALIZED (${rows}) SELECT * FROM folder ORDER BY id DESC LIMIT $9`,
      values,
    };
    if (await this.folderHoldsFewer(filter, FOLDER_SORTED_ROWS)) return sorted;
    // The inner LIMIT keeps the conditions out of the walk (none is pushed below a LIMIT):
    // the newest rows by the primary key, then filtered.
    const walk = {
      text: `SELECT * FROM (
               SELECT ${columns} FROM kb_audit WHERE ${below}
                ORDER BY id DESC LIMIT ${FOLDER_WALK_ROWS}) AS newest
              WHERE ${matching}
              ORDER BY id DESC LIMIT $9`,
      values,
    };
    const walked: ChangeRow[] = await this.dataSource.query(walk.text, walk.values);
    return walked.length >= limit ? { ...walk, rows: walked } : sorted;
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
