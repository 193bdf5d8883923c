import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { PreparedStatements } from '../database/prepared-statements';
import { isDatabaseUnavailable } from '../database/database-errors';

/** How often the deltas written by triggers are folded into the counts. */
const FOLD_EVERY_MS = 10_000;

/** Alive documents of a folder: in its whole subtree, and directly in it. */
export interface FolderCount {
  readonly subtree: number;
  readonly here: number;
}

/**
 * The number of alive documents of each folder, kept by triggers in `kb_folder_counts` plus
 * the deltas not folded into it yet (migrations/1763800100000-folder-counts.ts): a folder's
 * count is two index lookups, whatever it holds. Folders are written without their trailing
 * `/`; the root is ''.
 */
@Injectable()
export class FolderCountsRepository implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('FolderCounts');
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly statements: PreparedStatements) {}

  /** The counts of `folders` (0 for a folder that holds nothing), read in one snapshot. */
  async counts(folders: readonly string[]): Promise<Map<string, FolderCount>> {
    const [text, values] = this.countsQueryForExplain(folders);
    const rows = await this.statements.query<{ folder: string; subtree: string; here: string }>(
      'kb_folder_counts_of',
      text,
      values,
    );
    return new Map(
      rows.map((row) => [row.folder, { subtree: Number(row.subtree), here: Number(row.here) }]),
    );
  }

  countsQueryForExplain(folders: readonly string[]): [string, unknown[]] {
    return [
      // One lookup of the count row and one range of the deltas per folder asked (subqueries
      // rather than joins, so that no plan reads the whole table of counts).
      `SELECT f.folder,
              COALESCE((SELECT subtree FROM kb_folder_counts c WHERE c.folder = f.folder), 0)
                + COALESCE((SELECT sum(subtree) FROM kb_folder_count_deltas d
                             WHERE d.folder = f.folder), 0) AS subtree,
              COALESCE((SELECT here FROM kb_folder_counts c WHERE c.folder = f.folder), 0)
                + COALESCE((SELECT sum(here) FROM kb_folder_count_deltas d
                             WHERE d.folder = f.folder), 0) AS here
         FROM unnest($1::text[]) AS f(folder)`,
      [folders],
    ];
  }

  /**
   * Folds every delta committed so far into the counts, in one statement: the deltas it
   * deletes are the ones it adds, so two folds at once never count one twice (the second
   * finds them gone), and a reader sees either the deltas or their sum.
   */
  async fold(): Promise<number> {
    const [{ folded }] = await this.statements.write<{ folded: number }>(
      'kb_folder_counts_fold',
      `WITH moved AS (
         DELETE FROM kb_folder_count_deltas RETURNING folder, subtree, here),
       sums AS (
         SELECT folder, sum(subtree) AS subtree, sum(here) AS here FROM moved GROUP BY folder),
       folded AS (
         INSERT INTO kb_folder_counts AS c (folder, subtree, here)
         SELECT folder, subtree, here FROM sums
         ON CONFLICT (folder) DO UPDATE
            SET subtree = c.subtree + EXCLUDED.subtree, here = c.here + EXCLUDED.here
         RETURNING 1)
       SELECT (SELECT count(*) FROM moved)::int AS folded`,
      [],
    );
    return folded;
  }

  onModuleInit(): void {
    this.timer = setInterval(() => {
      this.fold().catch((error: unknown) => {
        if (!isDatabaseUnavailable(error)) {
          this.logger.warn(`folding the folder counts: ${String(error)}`);
        }
      });
    }, FOLD_EVERY_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }
}
