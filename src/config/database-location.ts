/**
 * Where the database is: all that a command that only migrates reads (`node dist/src/migrate.js`,
 * the TypeORM CLI), nothing of the server's own settings. A migration Job then needs only
 * DATABASE_URL, whatever the image sets for serving (HOST=0.0.0.0 wants API keys, which a
 * migration has no use for). Apart from load-config.ts, which reads the same two variables
 * through it, so that the TypeORM CLI (ts-node) compiles a few files, not the whole server.
 */
import { resolve } from 'node:path';
import { ConfigError } from './config-error';
import { type Env, type Reader, readersOf } from './env-reader';

export interface DatabaseLocation {
  /** `undefined`: the embedded PostgreSQL, kept under `dataDir`. */
  readonly databaseUrl: string | undefined;
  /** Absolute. */
  readonly dataDir: string;
}

/** DATABASE_URL and DATA_DIR, read by `read`. Throws {@link ConfigError} naming a bad one. */
export function databaseLocation(read: Reader): DatabaseLocation {
  const databaseUrl = read('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(
      'DATABASE_URL',
      'must be a postgres:// or postgresql:// connection string',
    );
  }
  const dataDir = read('DATA_DIR');
  if (dataDir === undefined) throw new Error('DATA_DIR has no default in src/config/variables.ts');
  return { databaseUrl, dataDir: resolve(dataDir) };
}

/** {@link databaseLocation} of the environment. */
export function loadDatabaseLocation(env: Env = process.env): DatabaseLocation {
  return databaseLocation(readersOf(env).read);
}
