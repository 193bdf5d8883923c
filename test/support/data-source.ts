import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { createTestDatabase, type TestDatabase } from './database';

/**
 * A database of its own for the `describe` block this is called in, and a TypeORM DataSource
 * on it (four connections): made before the block's tests, destroyed and dropped after them.
 * What it gives is the DataSource, once the tests run.
 */
export function useTestDataSource(): () => DataSource {
  let db: TestDatabase | undefined;
  let dataSource: DataSource | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 4)).initialize();
  });
  afterAll(async () => {
    // Whatever was made, if the making failed half-way (its error is the one to see).
    await dataSource?.destroy();
    await db?.drop();
  });
  return () => dataSource!;
}
