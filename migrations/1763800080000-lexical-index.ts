import { MigrationInterface, QueryRunner } from 'typeorm';
import { PUNCTUATION_SQL, SPACES_SQL } from './1763800070000-passages';

/**
 * The lexical index (docs/search.md): `kb_lexical_documents` holds, for each document the
 * vector worker has chunked, its analysed terms (one per line) and per term its counts in
 * the title, headings and body and its best passage (little-endian int32 pairs), the
 * fields' and passages' lengths, and the analyzer version that produced them. Every change
 * is logged by trigger in `kb_lexical_changes`, so each server keeps its in-memory index
 * current by reading only what changed (database/change-log.ts).
 *
 * The passages stay in `kb_passages` (the answer's heading path and snippet) without their
 * full-text vector and GIN index, which nothing reads any more. Every alive document is
 * queued to be indexed again.
 */
export class LexicalIndex1763800080000 implements MigrationInterface {
  name = 'LexicalIndex1763800080000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE kb_lexical_documents (
        document_id     text COLLATE "C" PRIMARY KEY
                        REFERENCES kb_documents (document_id) ON DELETE CASCADE,
        revision        integer NOT NULL,
        analyzer        integer NOT NULL,
        tags            text[] NOT NULL,
        lengths         integer[] NOT NULL CHECK (cardinality(lengths) = 3),
        passage_lengths integer[] NOT NULL,
        terms           text NOT NULL,
        postings        bytea NOT NULL CHECK (octet_length(postings) % 8 = 0)
      )`);
    await queryRunner.query(`
      CREATE TABLE kb_lexical_changes (
        id          bigserial PRIMARY KEY,
        xid         xid8 NOT NULL DEFAULT pg_current_xact_id(),
        document_id text COLLATE "C" NOT NULL,
        changed_at  timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(`CREATE INDEX kb_lexical_changes_xid ON kb_lexical_changes (xid)`);
    await queryRunner.query(
      `CREATE INDEX kb_lexical_changes_changed_at ON kb_lexical_changes (changed_at)`,
    );
    await queryRunner.query(`
      CREATE TABLE kb_lexical_meta (
        singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        generation     integer NOT NULL DEFAULT 1,
        pruned_through bigint NOT NULL DEFAULT 0
      )`);
    await queryRunner.query(`INSERT INTO kb_lexical_meta DEFAULT VALUES`);
    await queryRunner.query(`
      CREATE FUNCTION kb_lexical_log_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO kb_lexical_changes (document_id)
        SELECT DISTINCT document_id FROM changed_rows;
        RETURN NULL;
      END $$`);
    for (const [event, table] of [
      ['INSERT', 'NEW'],
      ['UPDATE', 'NEW'],
      ['DELETE', 'OLD'],
    ]) {
      await queryRunner.query(`
        CREATE TRIGGER kb_lexical_log_${event.toLowerCase()} AFTER ${event} ON kb_lexical_documents
        REFERENCING ${table} TABLE AS changed_rows
        FOR EACH STATEMENT EXECUTE FUNCTION kb_lexical_log_change()`);
    }

    await queryRunner.query(`DROP INDEX kb_passages_search`);
    await queryRunner.query(`ALTER TABLE kb_passages DROP COLUMN search`);
    await queryRunner.query(`DROP FUNCTION kb_search_words(text)`);
    await queryRunner.query(`
      UPDATE kb_documents
         SET vector_status = 'pending', vector_queued_at = now(), vector_attempts = 0,
             vector_next_attempt_at = NULL, vector_error = NULL
       WHERE deleted_at IS NULL AND vector_status = 'ready'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE kb_lexical_documents`);
    await queryRunner.query(`DROP FUNCTION kb_lexical_log_change()`);
    await queryRunner.query(`DROP TABLE kb_lexical_meta`);
    await queryRunner.query(`DROP TABLE kb_lexical_changes`);
    await queryRunner.query(`
      CREATE FUNCTION kb_search_words(text) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN translate($1, ${PUNCTUATION_SQL}, ${SPACES_SQL})`);
    await queryRunner.query(`
      ALTER TABLE kb_passages ADD COLUMN search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple'::regconfig, kb_search_words(title)), 'A') ||
        setweight(to_tsvector('english'::regconfig, kb_search_words(title)), 'A') ||
        setweight(to_tsvector('simple'::regconfig, kb_search_words(heading)), 'B') ||
        setweight(to_tsvector('english'::regconfig, kb_search_words(heading)), 'B') ||
        setweight(to_tsvector('simple'::regconfig, kb_search_words(content)), 'C') ||
        setweight(to_tsvector('english'::regconfig, kb_search_words(content)), 'C')) STORED`);
    await queryRunner.query(`CREATE INDEX kb_passages_search ON kb_passages USING gin (search)`);
  }
}
