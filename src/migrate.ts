/**
 * Production migration entry point: `node dist/src/migrate.js`.
 *
 * Applies pending migrations with the compiled code (no ts-node, no dev dependencies) and
 * exits 0, or 1 with one line on stderr. The Helm chart runs it as a pre-install /
 * pre-upgrade Job while the Deployment runs with MIGRATIONS_RUN=false. Configuration is
 * the server's (DATABASE_URL; unset ⇒ the embedded PostgreSQL under DATA_DIR).
 */
import 'reflect-metadata';
import { DataSource, QueryRunner } from 'typeorm';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { dataSourceOptions } from './database/data-source-options';
import { EmbeddedPostgresHandle, startEmbeddedPostgres } from './database/embedded-postgres';

/**
 * Any constant works as long as every migration runner uses the same one: two runners
 * (an overlapping upgrade, a server started with MIGRATIONS_RUN=true) then take turns
 * instead of racing on the same DDL.
 */
const MIGRATION_LOCK_KEY = 'agent-data:migrations';

const LOCK_POLL_MS = 250;

const log = (message: string) => process.stdout.write(`agent-data migrate: ${message}\n`);

/** Applies every pending migration on the database `config` names; resolves with their names. */
async function runMigrations(config: AppConfig): Promise<string[]> {
  let embedded: EmbeddedPostgresHandle | undefined;
  const url =
    config.databaseUrl ??
    (embedded = await startEmbeddedPostgres(config.dataDir, {
      info: log,
      warn: log,
      debug: () => undefined,
    })).url;
  // Two connections: the session holding the advisory lock, and one for the migrations.
  const dataSource = new DataSource(dataSourceOptions(url, 2));
  try {
    await dataSource.initialize();
    const lock = dataSource.createQueryRunner();
    try {
      await acquireLock(lock);
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK_KEY]);
      return applied.map((migration) => migration.name);
    } finally {
      await lock.release();
    }
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}

/**
 * Takes the session-level lock by polling `pg_try_advisory_lock`. A blocking
 * `pg_advisory_lock` would sit in a statement holding a snapshot, and the lock holder's
 * CREATE INDEX CONCURRENTLY waits for every such snapshot in the database: a deadlock no
 * detector sees. If the run fails, the lock goes with the session when the pool closes.
 */
async function acquireLock(runner: QueryRunner): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const [row] = (await runner.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [
      MIGRATION_LOCK_KEY,
    ])) as { locked: boolean }[];
    if (row.locked) return;
    if (attempt === 0) log('another migration run holds the lock: waiting for it');
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`agent-data migrate: invalid configuration: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const applied = await runMigrations(config);
  log(applied.length > 0 ? `applied ${applied.join(', ')}` : 'schema is up to date');
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    // The message only: never the configuration, which holds the connection string.
    process.stderr.write(
      `agent-data migrate: failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
