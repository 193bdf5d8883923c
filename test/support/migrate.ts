import { openDatabase } from '../../src/database/database-opener';

/** Applies every migration to the database at `url` (the template of a test run), as the server would. */
export async function migrateDatabase(url: string): Promise<void> {
  const opened = await openDatabase({
    target: { databaseUrl: url, dataDir: '' },
    poolSize: 2,
    migrate: true,
    log: { info: () => undefined, warn: () => undefined, debug: () => undefined },
  });
  await opened.close();
}
