import { Client } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * A PostgreSQL session advisory lock named `name` (hashed), held by one server at a time on a
 * connection of its own, outside the pool (held for minutes, it would take one of a small
 * pool's few connections from the queries): what releases it, or `undefined` when another
 * session holds it. A server that dies lets it go with its connection.
 */
export async function tryAdvisoryLock(
  dataSource: DataSource,
  name: string,
): Promise<(() => Promise<void>) | undefined> {
  const client = new Client({
    connectionString: (dataSource.options as { url?: string }).url,
    application_name: 'agent-data lock',
    connectionTimeoutMillis: 10_000,
  });
  // A connection lost meanwhile lets the lock go; its error is not the process's.
  client.on('error', () => undefined);
  const end = () => client.end().catch(() => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ locked: boolean }>(
      `SELECT pg_try_advisory_lock(hashtext($1)) AS locked`,
      [name],
    );
    if (!rows[0].locked) {
      await end();
      return undefined;
    }
  } catch (error) {
    await end();
    throw error;
  }
  // Ending the session releases its locks.
  return end;
}
