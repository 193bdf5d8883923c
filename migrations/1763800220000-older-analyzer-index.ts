import { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './concurrent-index';

/**
 * The lexical records another text analyzer than this release's (3) wrote, by id: what the
 * pass at start writes again, read in id order. Partial, so it holds only what the pass has not
 * written again (a few passed over), and every start's check for work reads those rather than
 * the whole table (some 200 ms of reads at 200 000 documents, in proportion beyond); records
 * written by an older release during a rolling update enter it and are found at the next
 * start. A release that changes the analyzer drops it and builds it for its own version (a
 * test compares the two). Built without locking writers.
 */
export class OlderAnalyzerIndex1763800220000 implements MigrationInterface {
  name = 'OlderAnalyzerIndex1763800220000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'kb_lexical_documents_older_analyzer',
      `ON kb_lexical_documents (document_id) WHERE analyzer <> 3`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP INDEX CONCURRENTLY IF EXISTS kb_lexical_documents_older_analyzer`,
    );
  }
}
