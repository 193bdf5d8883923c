import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Folders of alive documents as `parent_id || '/'`, for MCP completions of folder
 * arguments: every document of a folder's subtree has a key starting with `folder/`, so a
 * skip scan finds the next distinct folder in one probe, however many documents a folder
 * holds. Built without locking writers.
 */
export class FolderIndex1763800040000 implements MigrationInterface {
  name = 'FolderIndex1763800040000';
  // CREATE INDEX CONCURRENTLY cannot run inside a transaction.
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    // A concurrent build that was interrupted leaves an INVALID index behind, which
    // IF NOT EXISTS would keep for good: drop it and build again.
    const invalid: unknown[] = await queryRunner.query(
      `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = 'kb_documents_alive_folder' AND NOT i.indisvalid`,
    );
    if (invalid.length > 0) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_documents_alive_folder`);
    }
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS kb_documents_alive_folder
         ON kb_documents ((parent_id || '/')) WHERE deleted_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_documents_alive_folder`);
  }
}
