import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { DocumentsRepository } from '../src/documents/documents.repository';
import { startTestApp, TestApp } from './support/app';

/**
 * Hot reads and writes run as named prepared statements on the pool. A statement
 * PostgreSQL refuses must not cost its connection: pg-pool's own query() drops a client after
 * any error, which a client of the API could then cause at will.
 */
describe('statements on the pool', () => {
  let t: TestApp;
  let pool: Pool;
  let repository: DocumentsRepository;
  beforeAll(async () => {
    t = await startTestApp();
    pool = (t.app.get(DataSource).driver as PostgresDriver).master as Pool;
    repository = t.app.get(DocumentsRepository);
  });
  afterAll(() => t.close());

  it('keeps the connection of a statement PostgreSQL refused, and its prepared statements', async () => {
    await repository.findAlive('warm/up.md');
    const connections = pool.totalCount;
    expect(connections).toBeGreaterThan(0);
    // A NUL cannot be sent as text: PostgreSQL refuses the parameter (22021).
    await expect(repository.findAlive('a\u0000b')).rejects.toMatchObject({ code: '22021' });
    expect(pool.totalCount).toBe(connections);
    await expect(repository.findAlive('warm/up.md')).resolves.toBeNull();
    expect(pool.totalCount).toBe(connections);
  });
});
