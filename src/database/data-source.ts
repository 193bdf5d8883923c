/**
 * Data source for the TypeORM CLI (`npm run migration:run|revert|generate`), found by the
 * same opener as the server: with DATABASE_URL unset it starts the embedded PostgreSQL
 * under DATA_DIR; the cluster stops when the CLI exits. Like `migrate.ts`, it reads only
 * where the database is.
 */
import { DataSource } from 'typeorm';
import { loadDatabaseLocation } from '../config/database-location';
import { resolveDatabase } from './database-opener';
import { dataSourceOptions } from './data-source-options';

async function create(): Promise<DataSource> {
  const { url } = await resolveDatabase(loadDatabaseLocation(), {
    info: (m) => console.error(m),
    warn: (m) => console.error(m),
    debug: () => undefined,
  });
  return new DataSource(dataSourceOptions(url, 2));
}

export const dataSource = create();
