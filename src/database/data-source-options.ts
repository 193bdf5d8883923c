import { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations';

/** Options shared by the application and the migration CLI. Schema changes happen only in migrations. */
export function dataSourceOptions(url: string, poolSize = 10): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    synchronize: false,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    // 'each' lets a migration opt out of the transaction (CREATE INDEX CONCURRENTLY).
    migrationsTransactionMode: 'each',
    applicationName: 'agent-data',
    extra: { max: poolSize, connectionTimeoutMillis: 10_000, idleTimeoutMillis: 30_000 },
  };
}
