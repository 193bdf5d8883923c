import { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './concurrent-index';

/**
 * The alive documents by name (the last segment of the id, folded, without `.md`) and by
 * title, then by id, as links look for them (`[[backup]]`, `[[ops/backup]]`, `[[Backup
 * runbook]]`): the documents a path's tail or a title may mean, under one folder, are one
 * range of the index (a link looks in its document's folder first, then in each folder
 * above). Built without locking writers.
 */
export class LinkTargetIndexes1763800200001 implements MigrationInterface {
  name = 'LinkTargetIndexes1763800200001';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'kb_documents_alive_name',
      `ON kb_documents (kb_document_name(document_id), document_id) WHERE deleted_at IS NULL`,
    );
    await createIndexConcurrently(
      queryRunner,
      'kb_documents_alive_title',
      `ON kb_documents (kb_title_key(title), document_id) WHERE deleted_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_documents_alive_title`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_documents_alive_name`);
  }
}
