import type { DataSource } from 'typeorm';

/**
 * A PostgreSQL session advisory lock named `name` (hashed), held on a connection of its own
 * by one server at a time: what releases it, or `undefined` when another session holds it. A
 * server that dies lets it go with its connection.
 */
export async function tryAdvisoryLock(
  dataSource: DataSource,
  name: string,
): Promise<(() => Promise<void>) | undefined> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    const [{ locked }] = (await runner.query(
      `SELECT pg_try_advisory_lock(hashtext($1)) AS locked`,
      [name],
    )) as Array<{ locked: boolean }>;
    if (!locked) {
      await runner.release();
      return undefined;
    }
  } catch (error) {
    await runner.release();
    throw error;
  }
  return async () => {
    await runner.query(`SELECT pg_advisory_unlock(hashtext($1))`, [name]).catch(() => undefined);
    await runner.release();
  };
}
