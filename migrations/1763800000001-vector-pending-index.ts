import { MigrationInterface, QueryRunner } from 'typeorm';

/** The sync worker's queue: pending documents, oldest first. Built without locking writers. */
export class VectorPendingIndex1763800000001 implements MigrationInterface {
  name = 'VectorPendingIndex1763800000001';
  // CREATE INDEX CONCURRENTLY cannot run inside a transaction.
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS kb_documents_vector_pending
         ON kb_documents (vector_queued_at) WHERE vector_status = 'pending'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_documents_vector_pending`);
  }
}
