import { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './concurrent-index';

/**
 * Folders of alive documents as `parent_id || '/'`, for MCP completions of folder
 * arguments: every document of a folder's subtree has a key starting with `folder/`, so a
 * skip scan finds the next distinct folder in one probe, however many documents a folder
 * holds. Built without locking writers.
 */
export class FolderIndex1763800040000 implements MigrationInterface {
  name = 'FolderIndex1763800040000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'kb_documents_alive_folder',
      `ON kb_documents ((parent_id || '/')) WHERE deleted_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_documents_alive_folder`);
  }
}
