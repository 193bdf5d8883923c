import { Inject, Injectable } from '@nestjs/common';
import { Client } from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { DATABASE_URL } from '../database/database.module';
import { KEPT_TABLES, type KeptTable } from './backup-tables';

/** What a snapshot says of itself before its tables are read. */
export interface SnapshotFacts {
  readonly schema: string;
  readonly postgresVersion: string;
  readonly auditThrough: number;
}

/** The columns of every table of the public schema, as the database has them. */
export type SchemaColumns = Map<string, string[]>;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The SQL of backups and restores. Each runs on a connection of its own rather than one of the
 * pool's (a backup of a large knowledge base holds it for minutes), with the text formats fixed
 * (UTC, ISO dates) so that a backup reads the same whatever the server's settings.
 */
@Injectable()
export class BackupRepository {
  constructor(@Inject(DATABASE_URL) private readonly url: string) {}

  /**
   * A read-only repeatable-read transaction: every table is read in its one snapshot while
   * writes go on. Close it with {@link Snapshot.close}.
   */
  async openSnapshot(): Promise<Snapshot> {
    const client = await this.connect('agent-data-backup');
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      return new Snapshot(client, await this.facts(client));
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  /**
   * A restore's transaction, with the kept tables locked against every other session until
   * it ends, so that the database found empty stays so. Close it with {@link Restore.commit}
   * or {@link Restore.rollback}.
   */
  async openRestore(): Promise<Restore> {
    const client = await this.connect('agent-data-restore');
    try {
      await client.query('BEGIN');
      await client.query(
        `LOCK TABLE ${KEPT_TABLES.map((t) => t.name).join(', ')} IN ACCESS EXCLUSIVE MODE`,
      );
      return new Restore(client, await this.facts(client));
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  private async connect(applicationName: string): Promise<Client> {
    const client = new Client({
      connectionString: this.url,
      application_name: applicationName,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    // A connection lost mid-way fails the query or COPY in progress; this keeps the process up.
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query(`SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'`);
      await client.query(`SET client_encoding = 'UTF8'; SET statement_timeout = 0`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  }

  private async facts(client: Client): Promise<SnapshotFacts> {
    const { rows } = await client.query<{ schema: string; version: string; through: string }>(
      `SELECT (SELECT name FROM typeorm_migrations ORDER BY timestamp DESC, id DESC LIMIT 1) AS schema,
              current_setting('server_version') AS version,
              (SELECT COALESCE(max(id), 0) FROM kb_audit) AS through`,
    );
    return {
      schema: rows[0].schema,
      postgresVersion: rows[0].version,
      auditThrough: Number(rows[0].through),
    };
  }
}

/** A backup's snapshot: its facts and each kept table's rows as COPY text. */
export class Snapshot {
  constructor(
    private readonly client: Client,
    readonly facts: SnapshotFacts,
  ) {}

  /** The rows of `table`, ordered by its key; a stream that pauses the connection when unread. */
  rows(table: KeptTable): Readable {
    return this.client.query(
      copyTo(
        `COPY (SELECT ${table.columns.map(quote).join(', ')} FROM ${table.name}
                ORDER BY ${table.order}) TO STDOUT`,
      ),
    );
  }

  /** Every column of every table of the schema (what a backup must account for). */
  async columns(): Promise<SchemaColumns> {
    return columnsOf(this.client);
  }

  /**
   * Ends the connection, whether or not every table was read: the transaction read nothing
   * it must keep, and a COPY cut off by a client that went away cannot end otherwise.
   */
  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

/** A restore's transaction. */
export class Restore {
  constructor(
    private readonly client: Client,
    readonly facts: SnapshotFacts,
  ) {}

  /** The kept tables that hold rows (none: the knowledge base is empty). */
  async nonEmptyTables(): Promise<string[]> {
    const { rows } = await this.client.query<{ name: string }>(
      KEPT_TABLES.map(
        (table) => `SELECT '${table.name}' AS name WHERE EXISTS (SELECT 1 FROM ${table.name})`,
      ).join(' UNION ALL '),
    );
    return rows.map((row) => row.name);
  }

  async columns(): Promise<SchemaColumns> {
    return columnsOf(this.client);
  }

  /**
   * Turns the kept tables' own triggers off until {@link commit}: restored rows are not writes
   * (no audit row, snapshot or notification per document); what the triggers would derive is
   * derived once at the end. Only this transaction sees them off.
   */
  async quietTriggers(): Promise<void> {
    for (const table of KEPT_TABLES) {
      await this.client.query(`ALTER TABLE ${table.name} DISABLE TRIGGER USER`);
    }
  }

  /** A stream into `table`'s `columns` (known names: checked by the caller) in COPY text. */
  copyInto(table: string, columns: readonly string[]): Writable {
    return this.client.query(
      copyFrom(`COPY ${table} (${columns.map(quote).join(', ')}) FROM STDIN`),
    );
  }

  /**
   * Moves every sequence past the restored ids, counts the folders again, queues every
   * document for its links to be read, turns the triggers back on, wakes the pipeline on every
   * server (the documents are all pending) and commits.
   */
  async commit(): Promise<void> {
    for (const table of KEPT_TABLES) {
      if (table.serial === undefined) continue;
      await this.client.query(
        `SELECT setval(pg_get_serial_sequence('${table.name}', '${table.serial}'),
                       COALESCE(max(${table.serial}), 0) + 1, false)
           FROM ${table.name}`,
      );
    }
    await this.client.query(`DELETE FROM kb_folder_count_deltas`);
    await this.client.query(`DELETE FROM kb_folder_counts`);
    await this.client.query(`
      INSERT INTO kb_folder_counts (folder, subtree, here)
      SELECT f.folder, count(*), count(*) FILTER (WHERE f.here)
        FROM kb_documents d, LATERAL kb_folders_of(d.document_id) AS f
       WHERE d.deleted_at IS NULL
       GROUP BY f.folder`);
    // Every document's links are read again from its body, in the background (links-pending.job.ts).
    await this.client.query(`DELETE FROM kb_links`);
    await this.client.query(`DELETE FROM kb_links_pending`);
    await this.client.query(`INSERT INTO kb_links_pending SELECT document_id FROM kb_documents`);
    for (const table of KEPT_TABLES) {
      await this.client.query(`ALTER TABLE ${table.name} ENABLE TRIGGER USER`);
    }
    await this.client.query(`SELECT pg_notify('kb_vector_sync', '{"op":"reindex"}')`);
    await this.client.query('COMMIT');
    await this.client.end().catch(() => undefined);
  }

  /** Undoes everything (a COPY that failed is ended first); never throws. */
  async rollback(): Promise<void> {
    await this.client.query('ROLLBACK').catch(() => undefined);
    await this.client.end().catch(() => undefined);
  }
}

/** Waits for a COPY FROM stream to be acknowledged by the server after its end. */
export async function endCopy(stream: Writable): Promise<void> {
  stream.end();
  await finished(stream);
}

async function columnsOf(client: Client): Promise<SchemaColumns> {
  const { rows } = await client.query<{ table_name: string; column_name: string }>(
    `SELECT c.table_name, c.column_name
       FROM information_schema.columns c
       JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name, c.ordinal_position`,
  );
  const columns: SchemaColumns = new Map();
  for (const row of rows) {
    columns.set(row.table_name, [...(columns.get(row.table_name) ?? []), row.column_name]);
  }
  return columns;
}
