import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The vector pipeline's state.
 *
 * On `kb_documents`: `vector_next_attempt_at` (retry backoff after a failed attempt) and
 * `vector_lease_expires_at` (the sync worker's exclusive hold on a document). The lease is a
 * column of its own because the touch trigger clears `vector_claimed_at` on every content
 * change, while the worker that holds a document must keep it until it has finished, so
 * that two workers never write one document's vectors at the same time.
 *
 * `kb_chunk_vectors` is the PostgreSQL vector store's table: one row per chunk, the vector
 * as little-endian float32 bytes. Every change to it is logged, by trigger, in
 * `kb_chunk_vector_changes` with its transaction id, so each server can keep its in-memory
 * search index current by reading only what changed (see postgres.vector-store.ts).
 */
export class VectorStore1763800030000 implements MigrationInterface {
  name = 'VectorStore1763800030000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE kb_documents
        ADD COLUMN vector_next_attempt_at timestamptz,
        ADD COLUMN vector_lease_expires_at timestamptz`);

    await queryRunner.query(`
      CREATE TABLE kb_chunk_vectors (
        document_id text COLLATE "C" NOT NULL
                    REFERENCES kb_documents (document_id) ON DELETE CASCADE,
        chunk_index integer NOT NULL CHECK (chunk_index >= 0),
        revision    integer NOT NULL,
        title       text NOT NULL,
        tags        text[] NOT NULL,
        ancestors   text[] NOT NULL,
        heading     text NOT NULL,
        content     text NOT NULL,
        embedding   bytea NOT NULL CHECK (octet_length(embedding) % 4 = 0),
        PRIMARY KEY (document_id, chunk_index)
      )`);
    // Float bytes do not compress: store them out of line as they are.
    await queryRunner.query(
      `ALTER TABLE kb_chunk_vectors ALTER COLUMN embedding SET STORAGE EXTERNAL`,
    );

    await queryRunner.query(`
      CREATE TABLE kb_chunk_vector_changes (
        id          bigserial PRIMARY KEY,
        xid         xid8 NOT NULL DEFAULT pg_current_xact_id(),
        document_id text COLLATE "C" NOT NULL,
        changed_at  timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(
      `CREATE INDEX kb_chunk_vector_changes_xid ON kb_chunk_vector_changes (xid)`,
    );
    await queryRunner.query(
      `CREATE INDEX kb_chunk_vector_changes_changed_at ON kb_chunk_vector_changes (changed_at)`,
    );

    // What the stored vectors are (a different embedder means they must all be rebuilt),
    // a generation bumped when they are dropped, and how far the change log was pruned.
    await queryRunner.query(`
      CREATE TABLE kb_chunk_vector_meta (
        singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        embedder       text NOT NULL,
        dimensions     integer NOT NULL CHECK (dimensions > 0),
        generation     integer NOT NULL DEFAULT 1,
        pruned_through bigint NOT NULL DEFAULT 0
      )`);

    await queryRunner.query(`
      CREATE FUNCTION kb_chunk_vectors_log_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO kb_chunk_vector_changes (document_id)
        SELECT DISTINCT document_id FROM changed_rows;
        RETURN NULL;
      END $$`);
    // Statement level with transition tables: one log row per document and statement,
    // cascaded deletes from kb_documents included.
    for (const [event, table] of [
      ['INSERT', 'NEW'],
      ['UPDATE', 'NEW'],
      ['DELETE', 'OLD'],
    ]) {
      await queryRunner.query(`
        CREATE TRIGGER kb_chunk_vectors_log_${event.toLowerCase()} AFTER ${event} ON kb_chunk_vectors
        REFERENCING ${table} TABLE AS changed_rows
        FOR EACH STATEMENT EXECUTE FUNCTION kb_chunk_vectors_log_change()`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE kb_chunk_vectors`);
    await queryRunner.query(`DROP FUNCTION kb_chunk_vectors_log_change()`);
    await queryRunner.query(`DROP TABLE kb_chunk_vector_meta`);
    await queryRunner.query(`DROP TABLE kb_chunk_vector_changes`);
    await queryRunner.query(`
      ALTER TABLE kb_documents
        DROP COLUMN vector_lease_expires_at,
        DROP COLUMN vector_next_attempt_at`);
  }
}
