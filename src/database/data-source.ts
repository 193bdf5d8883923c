/**
 * Data source for the TypeORM CLI (`npm run migration:run|revert|generate`).
 * With DATABASE_URL unset it starts the embedded PostgreSQL under DATA_DIR, like the server;
 * the cluster stops when the CLI exits.
 */
import { resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options';
import { startEmbeddedPostgres } from './embedded-postgres';

async function create(): Promise<DataSource> {
  const url =
    process.env.DATABASE_URL ??
    (
      await startEmbeddedPostgres(resolve(process.env.DATA_DIR ?? './.data'), {
        info: (m) => console.error(m),
        warn: (m) => console.error(m),
        debug: () => undefined,
      })
    ).url;
  return new DataSource(dataSourceOptions(url, 2));
}

export const dataSource = create();
