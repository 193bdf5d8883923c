import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';

/** Applies every migration to the database at `url` (the template of a test run). */
export async function migrateDatabase(url: string): Promise<void> {
  const dataSource = new DataSource(dataSourceOptions(url, 1));
  await dataSource.initialize();
  try {
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}
