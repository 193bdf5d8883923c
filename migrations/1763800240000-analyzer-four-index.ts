import { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './concurrent-index';

/**
 * The text analyzer's version 4 (words over 64 characters are no longer stemmed): the
 * records another analyzer wrote, by id, are now those not of version 4, so the partial index
 * the pass at start reads (1763800220000) is built again for it. Every record present is of an
 * older analyzer, and is in the new index until the pass writes it again. Built without
 * locking writers; between the drop and the build the check at start reads the table.
 */
export class AnalyzerFourIndex1763800240000 implements MigrationInterface {
  name = 'AnalyzerFourIndex1763800240000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await rebuild(queryRunner, 4);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await rebuild(queryRunner, 3);
  }
}

async function rebuild(queryRunner: QueryRunner, version: number): Promise<void> {
  await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_lexical_documents_older_analyzer`);
  await createIndexConcurrently(
    queryRunner,
    'kb_lexical_documents_older_analyzer',
    `ON kb_lexical_documents (document_id) WHERE analyzer <> ${version}`,
  );
}
