/**
 * Production migration entry point: `node dist/src/migrate.js`.
 *
 * Applies pending migrations with the compiled code (no ts-node, no dev dependencies) and
 * exits 0, or 1 with one line on stderr. The Helm chart runs it as a pre-install /
 * pre-upgrade Job while the Deployment runs with MIGRATIONS_RUN=false. It reads DATABASE_URL
 * (unset ⇒ the embedded PostgreSQL under DATA_DIR) and nothing of the server's settings: the
 * image's HOST=0.0.0.0, which the server refuses without API keys, does not stop it.
 */
import 'reflect-metadata';
import { ConfigError } from './config/config-error';
import { type DatabaseLocation, loadDatabaseLocation } from './config/database-location';
import { openDatabase } from './database/database-opener';

const log = (message: string) => process.stdout.write(`agent-data migrate: ${message}\n`);

/** Applies every pending migration on the database `target` names; resolves with their names. */
async function runMigrations(target: DatabaseLocation): Promise<readonly string[]> {
  const opened = await openDatabase({
    target,
    poolSize: 2,
    migrate: true,
    log: { info: log, warn: log, debug: () => undefined },
  });
  await opened.close();
  return opened.applied;
}

async function main(): Promise<void> {
  let target: DatabaseLocation;
  try {
    target = loadDatabaseLocation();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`agent-data migrate: invalid configuration: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const applied = await runMigrations(target);
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
