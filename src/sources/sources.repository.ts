import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { KnownItem } from './connectors/connector';
import type { SourceDeclaration } from './source-declaration';
import type { RunCounts, RunStatus, RunTrigger } from './sources.schemas';

export const NO_COUNTS: RunCounts = {
  checked: 0,
  created: 0,
  updated: 0,
  moved: 0,
  unchanged: 0,
  deleted: 0,
  held: 0,
  skipped: 0,
  failed: 0,
};

export interface SourceRow {
  id: string;
  kind: SourceDeclaration['kind'];
  mount: string;
  declaration: SourceDeclaration;
  origin: 'file' | 'api';
  cursor: string | null;
  next_run_at: Date | null;
  failures: number;
  paused: boolean;
  held_deletions: { keys: string[]; run_id: string } | null;
  last_success_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface RunRow {
  id: string;
  source_id: string;
  status: RunStatus;
  trigger: RunTrigger;
  confirm_deletions: boolean;
  queued_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  version: string | null;
  counts: RunCounts;
  failed_items: Array<{ key: string; document_id: string; reason: string }>;
  message: string | null;
}

/** What a source wrote of one item (`kb_source_items`). */
export interface ItemRow {
  key: string;
  document_id: string;
  version: string | null;
  uri: string;
  validators: Record<string, string> | null;
}

/** A run not heard of for this long is taken for dead (its server stopped or crashed). */
export const RUN_LEASE_SECONDS = 120;

/** All SQL of the sources (migrations/1763800140000-sources.ts). */
@Injectable()
export class SourcesRepository {
  constructor(private readonly dataSource: DataSource) {}

  async all(): Promise<SourceRow[]> {
    return this.dataSource.query(`SELECT * FROM kb_sources ORDER BY id`);
  }

  async find(id: string): Promise<SourceRow | null> {
    const rows: SourceRow[] = await this.dataSource.query(
      `SELECT * FROM kb_sources WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /**
   * Declares or changes a source. A changed declaration forgets the cursor (a new ref or
   * path lists everything again) and the failures, and is due at once.
   */
  async upsert(declaration: SourceDeclaration, origin: 'file' | 'api'): Promise<SourceRow> {
    const rows: SourceRow[] = await this.dataSource.query(
      `INSERT INTO kb_sources (id, kind, mount, declaration, origin, next_run_at)
       VALUES ($1, $2, $3, $4, $5, now())
       ON CONFLICT (id) DO UPDATE
          SET kind = EXCLUDED.kind, mount = EXCLUDED.mount, declaration = EXCLUDED.declaration,
              origin = EXCLUDED.origin, cursor = NULL, failures = 0, paused = false,
              next_run_at = now(), updated_at = now()
        WHERE kb_sources.declaration IS DISTINCT FROM EXCLUDED.declaration
           OR kb_sources.origin IS DISTINCT FROM EXCLUDED.origin
       RETURNING *`,
      [declaration.id, declaration.kind, declaration.mount, declaration, origin],
    );
    return rows[0] ?? (await this.find(declaration.id))!;
  }

  async remove(id: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM kb_sources WHERE id = $1`, [id]);
    await this.dataSource.query(
      `UPDATE kb_source_runs SET status = 'cancelled', finished_at = now(),
              message = 'the source was removed'
        WHERE source_id = $1 AND status IN ('queued', 'running')`,
      [id],
    );
  }

  /** The items a source wrote, by key. */
  async items(sourceId: string): Promise<Map<string, ItemRow>> {
    const rows: ItemRow[] = await this.dataSource.query(
      `SELECT key, document_id, version, uri, validators FROM kb_source_items WHERE source_id = $1`,
      [sourceId],
    );
    return new Map(rows.map((row) => [row.key, row]));
  }

  /** The documents each source owns, counted. */
  async documentCounts(): Promise<Map<string, number>> {
    const rows: Array<{ source_id: string; n: number }> = await this.dataSource.query(
      `SELECT source_id, count(*)::int AS n FROM kb_source_items GROUP BY source_id`,
    );
    return new Map(rows.map((row) => [row.source_id, row.n]));
  }

  /**
   * Claims items' documents for the source before writing them, so that a run cut between
   * the write and its record still owns what it wrote (the next run finds the claim, with
   * no version, and writes the item again). One statement for a whole batch: a statement per
   * item made a first sync of 10 000 files wait on 10 000 round trips.
   */
  async claim(
    sourceId: string,
    claims: ReadonlyArray<{ key: string; documentId: string; uri: string }>,
  ): Promise<void> {
    if (claims.length === 0) return;
    await this.dataSource.query(
      `INSERT INTO kb_source_items (source_id, key, document_id, version, uri)
       SELECT DISTINCT ON (c.key) $1, c.key, c.document_id, NULL, c.uri
         FROM unnest($2::text[], $3::text[], $4::text[]) AS c(key, document_id, uri)
       ON CONFLICT (source_id, key) DO UPDATE SET document_id = EXCLUDED.document_id`,
      [
        sourceId,
        claims.map((claim) => claim.key),
        claims.map((claim) => claim.documentId),
        claims.map((claim) => claim.uri),
      ],
    );
  }

  /** What items were written as (their version, provenance and validators): one statement. */
  async recordItems(
    sourceId: string,
    items: ReadonlyArray<KnownItem & { key: string }>,
  ): Promise<void> {
    if (items.length === 0) return;
    await this.dataSource.query(
      `UPDATE kb_source_items AS i
          SET version = r.version, uri = r.uri, validators = r.validators, fetched_at = now()
         FROM unnest($2::text[], $3::text[], $4::text[], $5::jsonb[])
              AS r(key, version, uri, validators)
        WHERE i.source_id = $1 AND i.key = r.key`,
      [
        sourceId,
        items.map((item) => item.key),
        items.map((item) => item.version),
        items.map((item) => item.uri),
        items.map((item) =>
          item.validators === undefined ? null : JSON.stringify(item.validators),
        ),
      ],
    );
  }

  /**
   * The item renamed: under its new key and document, its version forgotten, so that its
   * document is read again and written naming its new path, in this run or, should that
   * fail, in the next that lists it.
   */
  async moveItem(sourceId: string, from: string, to: string, documentId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE kb_source_items SET key = $3, document_id = $4, version = NULL
        WHERE source_id = $1 AND key = $2`,
      [sourceId, from, to, documentId],
    );
  }

  async forgetItems(sourceId: string, keys: readonly string[]): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM kb_source_items WHERE source_id = $1 AND key = ANY($2::text[])`,
      [sourceId, keys],
    );
  }

  async forgetAllItems(sourceId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM kb_source_items WHERE source_id = $1`, [sourceId]);
  }

  /**
   * Queues a run unless one is queued or running already (on any replica): the run that
   * will happen either way.
   */
  async enqueue(sourceId: string, trigger: RunTrigger, confirmDeletions = false): Promise<RunRow> {
    const rows: RunRow[] = await this.dataSource.query(
      `INSERT INTO kb_source_runs (source_id, status, trigger, confirm_deletions)
       VALUES ($1, 'queued', $2, $3)
       ON CONFLICT (source_id) WHERE status IN ('queued', 'running') DO NOTHING
       RETURNING *`,
      [sourceId, trigger, confirmDeletions],
    );
    if (rows[0] !== undefined) return rows[0];
    const active: RunRow[] = await this.dataSource.query(
      `SELECT * FROM kb_source_runs WHERE source_id = $1 AND status IN ('queued', 'running')`,
      [sourceId],
    );
    if (active[0] === undefined) return this.enqueue(sourceId, trigger, confirmDeletions);
    if (confirmDeletions && !active[0].confirm_deletions) {
      await this.dataSource.query(
        `UPDATE kb_source_runs SET confirm_deletions = true WHERE id = $1 AND status = 'queued'`,
        [active[0].id],
      );
    }
    return active[0];
  }

  /**
   * Queues a run of every source whose time has come (not paused, not disabled): `declared`
   * when its last run was queued before the source was declared or its declaration last
   * changed (`updated_at`), or it has none; `schedule` otherwise.
   */
  async enqueueDue(): Promise<number> {
    const rows = await this.dataSource.query(
      `INSERT INTO kb_source_runs (source_id, status, trigger)
       SELECT s.id, 'queued',
              CASE WHEN (SELECT r.queued_at FROM kb_source_runs r WHERE r.source_id = s.id
                          ORDER BY r.id DESC LIMIT 1) >= s.updated_at
                   THEN 'schedule' ELSE 'declared' END
         FROM kb_sources s
        WHERE NOT s.paused AND s.next_run_at IS NOT NULL AND s.next_run_at <= now()
          AND coalesce((s.declaration ->> 'enabled')::boolean, true)
       ON CONFLICT (source_id) WHERE status IN ('queued', 'running') DO NOTHING
       RETURNING id`,
    );
    return rows.length;
  }

  /** Takes the oldest queued run for `runner` (one replica gets each). */
  async claimRun(runner: string): Promise<RunRow | null> {
    const rows = updated<RunRow>(
      await this.dataSource.query(
        `UPDATE kb_source_runs SET status = 'running', runner = $1, started_at = now(),
              heartbeat_at = now()
        WHERE id = (SELECT id FROM kb_source_runs WHERE status = 'queued'
                     ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
       RETURNING *`,
        [runner],
      ),
    );
    return rows[0] ?? null;
  }

  async heartbeat(runId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE kb_source_runs SET heartbeat_at = now() WHERE id = $1 AND status = 'running'`,
      [runId],
    );
  }

  /** Whether the run is still running (not cancelled meanwhile, say by a removal). */
  async stillRunning(runId: string): Promise<boolean> {
    const rows = await this.dataSource.query(
      `SELECT 1 FROM kb_source_runs WHERE id = $1 AND status = 'running'`,
      [runId],
    );
    return rows.length > 0;
  }

  /** Ends runs whose server stopped answering for them: failed, to be run again. */
  async failAbandoned(): Promise<string[]> {
    const rows = updated<{ source_id: string }>(
      await this.dataSource.query(
        `UPDATE kb_source_runs SET status = 'failed', finished_at = now(),
              message = 'the server running it stopped before it ended'
        WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => $1)
       RETURNING source_id`,
        [RUN_LEASE_SECONDS],
      ),
    );
    return rows.map((row) => row.source_id);
  }

  async finishRun(
    runId: string,
    status: RunStatus,
    fields: {
      counts: RunCounts;
      failedItems: RunRow['failed_items'];
      version: string | null;
      message: string | null;
    },
  ): Promise<void> {
    await this.dataSource.query(
      `UPDATE kb_source_runs SET status = $2, finished_at = now(), counts = $3,
              failed_items = $4, version = $5, message = $6
        WHERE id = $1 AND status = 'running'`,
      [
        runId,
        status,
        fields.counts,
        JSON.stringify(fields.failedItems),
        fields.version,
        fields.message,
      ],
    );
  }

  /** After a run: the cursor, the held deletions, the schedule. */
  async afterRun(
    sourceId: string,
    fields: {
      succeeded: boolean;
      cursor?: string | null;
      held: { keys: string[]; run_id: string } | null;
      nextRunAt: Date | null;
      failures: number;
      paused: boolean;
    },
  ): Promise<void> {
    await this.dataSource.query(
      `UPDATE kb_sources
          SET cursor = CASE WHEN $2 THEN $3 ELSE cursor END,
              held_deletions = $4, next_run_at = $5, failures = $6, paused = $7,
              last_success_at = CASE WHEN $2 THEN now() ELSE last_success_at END
        WHERE id = $1`,
      [
        sourceId,
        fields.succeeded,
        fields.cursor ?? null,
        fields.held === null ? null : JSON.stringify(fields.held),
        fields.nextRunAt,
        fields.failures,
        fields.paused,
      ],
    );
  }

  async runs(sourceId: string, limit: number, before: string | null): Promise<RunRow[]> {
    return this.dataSource.query(
      `SELECT * FROM kb_source_runs WHERE source_id = $1 AND ($2::bigint IS NULL OR id < $2)
        ORDER BY id DESC LIMIT $3`,
      [sourceId, before, limit],
    );
  }

  async run(runId: string): Promise<RunRow | null> {
    const rows: RunRow[] = await this.dataSource.query(
      `SELECT * FROM kb_source_runs WHERE id = $1`,
      [runId],
    );
    return rows[0] ?? null;
  }

  /** The latest run of each source. */
  async lastRuns(): Promise<Map<string, RunRow>> {
    const rows: RunRow[] = await this.dataSource.query(
      `SELECT DISTINCT ON (source_id) * FROM kb_source_runs ORDER BY source_id, id DESC`,
    );
    return new Map(rows.map((row) => [row.source_id, row]));
  }
}

/** The rows an UPDATE ... RETURNING gave: TypeORM answers `[rows, count]` for an UPDATE. */
function updated<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}
