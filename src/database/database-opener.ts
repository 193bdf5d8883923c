import { DataSource, QueryRunner } from 'typeorm';
import { dataSourceOptions } from './data-source-options';
import { EmbeddedPostgresHandle, startEmbeddedPostgres } from './embedded-postgres';

/** Where the database is: DATABASE_URL, or the embedded cluster kept under DATA_DIR. */
export interface DatabaseTarget {
  readonly databaseUrl?: string;
  readonly dataDir: string;
  /** Leaving the embedded cluster waits until it has stopped (default true). */
  readonly embeddedStopWaits?: boolean;
}

export interface DatabaseLog {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

export interface OpenedDatabase {
  readonly dataSource: DataSource;
  /** The connection string in use (the embedded cluster's, or DATABASE_URL). */
  readonly url: string;
  /** The embedded cluster, `null` with DATABASE_URL. */
  readonly embedded: EmbeddedPostgresHandle | null;
  /** Migrations this opening applied, in order (none without `migrate`). */
  readonly applied: readonly string[];
  /** Closes the pool, then stops the embedded cluster (if any). */
  close(): Promise<void>;
}

/**
 * Any constant works as long as every migration runner uses the same one: runners (several
 * replicas starting with MIGRATIONS_RUN=true, the migration job, the CLI) then take turns
 * instead of racing on the same DDL.
 */
const MIGRATION_LOCK_KEY = 'agent-data:migrations';
const LOCK_POLL_MS = 250;

/**
 * The one way this project opens its database, for the server, `migrate.ts` and the
 * TypeORM CLI: the connection string (starting the embedded PostgreSQL when DATABASE_URL is
 * unset), an initialised data source with a pool of `poolSize`, and, with `migrate`, the
 * pending migrations applied under an advisory lock.
 */
export async function openDatabase(options: {
  target: DatabaseTarget;
  poolSize: number;
  migrate: boolean;
  log: DatabaseLog;
}): Promise<OpenedDatabase> {
  const { url, embedded } = await resolveDatabase(options.target, options.log);
  // The lock's session is one more connection beside the migrations' own.
  const dataSource = new DataSource(
    dataSourceOptions(url, options.migrate ? Math.max(2, options.poolSize) : options.poolSize),
  );
  const close = async () => {
    try {
      if (dataSource.isInitialized) await dataSource.destroy();
    } finally {
      await embedded?.stop();
    }
  };
  let applied: string[] = [];
  try {
    await dataSource.initialize();
    if (options.migrate) {
      applied = await migrateLocked(dataSource, options.log);
      if (applied.length > 0) options.log.info(`applied migrations: ${applied.join(', ')}`);
    }
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
  return { dataSource, url, embedded, applied, close };
}

/** DATABASE_URL, or the embedded cluster under DATA_DIR, started (created on first use). */
export async function resolveDatabase(
  target: DatabaseTarget,
  log: DatabaseLog,
): Promise<{ url: string; embedded: EmbeddedPostgresHandle | null }> {
  if (target.databaseUrl) return { url: target.databaseUrl, embedded: null };
  const embedded = await startEmbeddedPostgres(target.dataDir, log, {
    stopWaits: target.embeddedStopWaits ?? true,
  });
  return { url: embedded.url, embedded };
}

/**
 * Applies every pending migration while holding the advisory lock, and returns their names.
 * A runner that finds the lock taken waits, then finds the schema up to date.
 */
export async function migrateLocked(dataSource: DataSource, log: DatabaseLog): Promise<string[]> {
  const lock = dataSource.createQueryRunner();
  try {
    await acquireLock(lock, log);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((migration) => migration.name);
    } finally {
      await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await lock.release();
  }
}

/**
 * Takes the session-level lock by polling `pg_try_advisory_lock`. A blocking
 * `pg_advisory_lock` would sit in a statement holding a snapshot, and the lock holder's
 * CREATE INDEX CONCURRENTLY waits for every such snapshot in the database: a deadlock no
 * detector sees. If the run fails, the lock goes with the session when the pool closes.
 */
async function acquireLock(runner: QueryRunner, log: DatabaseLog): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const [row] = (await runner.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [
      MIGRATION_LOCK_KEY,
    ])) as { locked: boolean }[];
    if (row.locked) return;
    if (attempt === 0) log.info('another migration run holds the lock: waiting for it');
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}
