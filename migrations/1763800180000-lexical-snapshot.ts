import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The lexical index as a server last held it (src/vectors/lexical/lexical-snapshot.ts), with
 * the change-log position it reflects, so that a restart reads it back whole and replays only
 * the changes since, rather than building it again from every document's record. One header
 * row and its parts (at most 4 MiB each, each with its CRC-32); the parts are stored without
 * compression (most of them are postings, which compress little and would cost a restart
 * their decompression).
 */
export class LexicalSnapshot1763800180000 implements MigrationInterface {
  name = 'LexicalSnapshot1763800180000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE kb_lexical_snapshot (
        singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        format     integer NOT NULL,
        generation integer NOT NULL,
        applied_id bigint NOT NULL,
        position   jsonb NOT NULL,
        layout     jsonb NOT NULL,
        parts      integer NOT NULL,
        documents  integer NOT NULL,
        saved_at   timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE kb_lexical_snapshot_parts (
        part  integer PRIMARY KEY CHECK (part >= 0),
        crc   bigint NOT NULL,
        bytes bytea NOT NULL
      )`);
    await queryRunner.query(
      `ALTER TABLE kb_lexical_snapshot_parts ALTER COLUMN bytes SET STORAGE EXTERNAL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE kb_lexical_snapshot_parts`);
    await queryRunner.query(`DROP TABLE kb_lexical_snapshot`);
  }
}
