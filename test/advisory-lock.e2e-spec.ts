import { DataSource } from 'typeorm';
import { tryAdvisoryLock } from '../src/database/advisory-lock';
import { dataSourceOptions } from '../src/database/data-source-options';
import { useTestDataSource } from './support/data-source';

describe('an advisory lock held by one server at a time', () => {
  const dataSource = useTestDataSource();

  it('is held by one holder, given up by the release, and named', async () => {
    const first = await tryAdvisoryLock(dataSource(), 'a lock');
    expect(first).toBeDefined();
    expect(await tryAdvisoryLock(dataSource(), 'a lock')).toBeUndefined();
    const other = await tryAdvisoryLock(dataSource(), 'another lock');
    expect(other).toBeDefined();
    await first!();
    const second = await tryAdvisoryLock(dataSource(), 'a lock');
    expect(second).toBeDefined();
    await Promise.all([second!(), other!()]);
  });

  it('holds none of the pool’s connections while held', async () => {
    // A pool of one connection, as a small deployment's: a query still gets it.
    const small = await new DataSource(
      dataSourceOptions((dataSource().options as { url: string }).url, 1),
    ).initialize();
    const release = await tryAdvisoryLock(small, 'held long');
    try {
      const [{ holders }] = await small.query(
        `SELECT count(*)::int AS holders FROM pg_locks l JOIN pg_stat_activity a USING (pid)
          WHERE l.locktype = 'advisory' AND a.application_name = 'agent-data lock'`,
      );
      expect(holders).toBe(1);
    } finally {
      await release?.();
      await small.destroy();
    }
  });
});
