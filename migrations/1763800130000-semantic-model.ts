import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The latent-semantic model last learnt, kept so that a server starting on an existing
 * knowledge base searches with it at once instead of learning it again (which took most of a
 * restart: 30 s at 50 000 documents). One row; a model of another analyzer is not used.
 */
export class SemanticModel1763800130000 implements MigrationInterface {
  name = 'SemanticModel1763800130000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE kb_semantic_model (
        singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        analyzer   integer NOT NULL,
        model_id   text NOT NULL,
        dimensions integer NOT NULL,
        documents  integer NOT NULL,
        learnt_at  integer NOT NULL,
        terms      text NOT NULL,
        vectors    bytea NOT NULL,
        idf        bytea NOT NULL,
        saved_at   timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE kb_semantic_model`);
  }
}
