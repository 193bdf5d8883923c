/**
 * Following a table from memory: a trigger writes the id of every document changed in the
 * table to a change log (`id bigserial, document_id, xid xid8, changed_at`) beside a meta row
 * (`generation`, `pruned_through`); a server holding a copy in memory reads, before a search,
 * the log entries it has not applied yet and reloads those documents, so several servers on
 * one database all see every write, whoever made it.
 *
 * Entries are only visible once their transaction commits, which is not in id order. So
 * each read also records the transactions still running (`pg_snapshot_xip`), and the next
 * read takes entries with a higher id *or* written by one of those transactions (a
 * transaction that starts later gets higher ids). The generation changes when the table is
 * emptied at once; entries older than the retention are pruned: a server that finds either
 * reloads everything.
 */
export interface ChangeLog {
  /** The log table. */
  readonly log: string;
  /** Its one-row meta table. */
  readonly meta: string;
}

export interface LogPosition {
  readonly generation: number;
  /** Highest change id applied (bigint as text). */
  readonly appliedId: string;
  /** Transactions running when the log was last read: their changes may still appear. */
  readonly inProgress: readonly string[];
}

/** Runs a statement, its rows as the caller expects them (a DataSource's or a runner's query). */
type Query = (text: string, values?: unknown[]) => Promise<never[]>;

/**
 * Where the log stands in the caller's snapshot (read it in the snapshot of a full load). A log
 * pruned empty stands where it was pruned, not at 0: a position below the pruned entries
 * would read as "too far behind, reload everything" at every read (a knowledge base left
 * without writes for longer than the retention reloaded its whole index before each search).
 */
export async function logHead(query: Query, log: ChangeLog): Promise<LogPosition> {
  const [head]: Array<{ generation: number; in_progress: string[]; max_id: string }> = await query(
    `SELECT m.generation,
              ARRAY(SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) AS x) AS in_progress,
              GREATEST((SELECT COALESCE(max(id), 0) FROM ${log.log}), m.pruned_through)::text
                AS max_id
         FROM ${log.meta} m`,
  );
  if (!head) throw new Error(`${log.meta} has no row (not initialised yet)`);
  return { generation: head.generation, appliedId: head.max_id, inProgress: head.in_progress };
}

/**
 * The documents changed since `position` and the position after them; `undefined` when the
 * log no longer holds everything since then (pruned past it, or a new generation): reload.
 */
export async function changesSince(
  query: Query,
  log: ChangeLog,
  position: LogPosition,
): Promise<{ documents: string[]; next: LogPosition } | undefined> {
  const [row]: Array<{
    generation: number;
    pruned_through: string;
    in_progress: string[];
    documents: string[];
    max_id: string | null;
  }> = await query(...changesStatement(log, position));
  if (
    !row ||
    row.generation !== position.generation ||
    BigInt(row.pruned_through) > BigInt(position.appliedId)
  ) {
    return undefined;
  }
  return {
    documents: row.documents,
    next: {
      generation: row.generation,
      appliedId: row.max_id ?? position.appliedId,
      inProgress: row.in_progress,
    },
  };
}

/** Removes entries older than `retentionMs`, remembering how far the log was pruned. */
export async function pruneLog(query: Query, log: ChangeLog, retentionMs: number): Promise<void> {
  await query(
    `WITH gone AS (
       DELETE FROM ${log.log}
        WHERE changed_at < clock_timestamp() - make_interval(secs => $1::float8 / 1000)
       RETURNING id)
     UPDATE ${log.meta}
        SET pruned_through = GREATEST(pruned_through, (SELECT COALESCE(max(id), 0) FROM gone))`,
    [retentionMs],
  );
}

/** The statement of {@link changesSince} (exported for EXPLAIN in tests). */
export function changesStatement(log: ChangeLog, position: LogPosition): [string, unknown[]] {
  return [
    `SELECT m.generation, m.pruned_through::text AS pruned_through,
            ARRAY(SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) AS x) AS in_progress,
            ARRAY(SELECT DISTINCT document_id FROM ${log.log}
                   WHERE id > $1::bigint OR xid = ANY($2::xid8[])) AS documents,
            (SELECT max(id)::text FROM ${log.log} WHERE id > $1::bigint) AS max_id
       FROM ${log.meta} m`,
    [position.appliedId, position.inProgress],
  ];
}

/**
 * One catch-up with the log at a time, shared by its callers: a caller that comes while one
 * runs waits for the next one (the running one may have read the log before the caller's
 * latest write committed), which all later callers share.
 */
export class SharedRefresh {
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(private readonly catchUp: () => Promise<void>) {}

  refresh(): Promise<void> {
    if (!this.running) {
      this.running = this.catchUp().finally(() => (this.running = undefined));
      return this.running;
    }
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.refresh();
      });
    return this.next;
  }

  /** Resolves once no catch-up runs (whatever its outcome). */
  async settled(): Promise<void> {
    await this.running?.catch(() => undefined);
  }
}
