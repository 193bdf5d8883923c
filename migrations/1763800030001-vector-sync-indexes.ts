import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Small partial indexes for the recovery sweep, so it never reads the whole table:
 * documents in `error` (by when they may be retried), `ready` documents whose embedded
 * revision is behind, and documents under a sync lease. Built without locking writers.
 */
export class VectorSyncIndexes1763800030001 implements MigrationInterface {
  name = 'VectorSyncIndexes1763800030001';
  // CREATE INDEX CONCURRENTLY cannot run inside a transaction.
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS kb_documents_vector_error
         ON kb_documents (vector_next_attempt_at) WHERE vector_status = 'error'`,
    );
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS kb_documents_vector_behind
         ON kb_documents (document_id)
         WHERE vector_status = 'ready' AND vector_revision IS DISTINCT FROM revision`,
    );
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS kb_documents_vector_leased
         ON kb_documents (vector_lease_expires_at) WHERE vector_lease_expires_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_documents_vector_leased`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_documents_vector_behind`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_documents_vector_error`);
  }
}
