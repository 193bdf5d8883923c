import type { QueryRunner } from 'typeorm';

/**
 * Builds the index `name` (`definition`: `ON table (...)`, with its `WHERE` if partial)
 * without locking writers, in a migration with `transaction = false` (CREATE INDEX
 * CONCURRENTLY cannot run inside a transaction). A concurrent build that was interrupted
 * leaves an INVALID index behind, which IF NOT EXISTS would keep for good: it is dropped and
 * built again.
 */
export async function createIndexConcurrently(
  queryRunner: QueryRunner,
  name: string,
  definition: string,
): Promise<void> {
  const invalid: unknown[] = await queryRunner.query(
    `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = $1 AND NOT i.indisvalid`,
    [name],
  );
  if (invalid.length > 0) await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
  await queryRunner.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ${definition}`);
}
