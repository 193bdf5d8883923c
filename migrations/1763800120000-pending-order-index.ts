import { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './concurrent-index';

/**
 * The pending documents in queue order with their ids: the lexical pass of the pipeline
 * (vectors/sync/lexical-first.lane.ts) walks them with a cursor (queue time, id), which the
 * former index on the queue time alone could only serve by sorting every pending document.
 * The worker's claims (oldest first) use it as they used the former one. Built without locking
 * writers, the former one dropped after.
 */
export class PendingOrderIndex1763800120000 implements MigrationInterface {
  name = 'PendingOrderIndex1763800120000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'kb_documents_vector_pending_order',
      `ON kb_documents (vector_queued_at, document_id) WHERE vector_status = 'pending'`,
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_documents_vector_pending`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'kb_documents_vector_pending',
      `ON kb_documents (vector_queued_at) WHERE vector_status = 'pending'`,
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_documents_vector_pending_order`);
  }
}
