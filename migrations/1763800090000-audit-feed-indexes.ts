import { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './concurrent-index';

/** The new indexes of `kb_audit`: name → columns. */
const INDEXES = {
  // Newest first among one actor's or one operation's rows: a backward range of the index,
  // however rare the actor or the operation (refused attempts are few among many writes).
  kb_audit_actor: '(actor, id)',
  kb_audit_operation: '(operation, id)',
  // A time window far from the newest rows: the rows in the window, not those after it.
  kb_audit_at: '(at)',
};

/**
 * Indexes for the change feed over the audit trail (`GET /documents/changes`,
 * docs/documents.md). It pages by id, newest first: the primary key serves the feed without
 * a filter, `kb_audit_document (document_id, id)` a folder, these an actor, an operation and
 * a time window. Built without locking writers.
 */
export class AuditFeedIndexes1763800090000 implements MigrationInterface {
  name = 'AuditFeedIndexes1763800090000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const [name, columns] of Object.entries(INDEXES)) {
      await createIndexConcurrently(queryRunner, name, `ON kb_audit ${columns}`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const name of Object.keys(INDEXES).reverse()) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    }
  }
}
