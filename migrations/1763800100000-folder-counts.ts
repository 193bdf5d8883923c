import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How many alive documents each folder holds, kept by trigger, so that the folder tree
 * (`GET /documents/folders`) reads a number per folder instead of counting a folder's
 * documents at each request (a folder of 20 000 is 20 000 index entries to count; the root of
 * a million documents, a million).
 *
 * Writers never update a shared counter row (concurrent writes into one folder would queue on
 * its lock): each statement that creates, deletes, restores or moves documents appends its
 * net change per folder to `kb_folder_count_deltas`, and a background job folds the deltas
 * into `kb_folder_counts` now and then. A count is its folded value plus the deltas not folded
 * yet, read in one snapshot, so it is exact at every moment.
 *
 * Folders are ids' prefixes up to a `/`, without it: `a/b/c.md` counts in the subtree of `a`
 * and of `a/b`, and directly (`here`) in `a/b`. A document at the top level counts directly in
 * the folder '' (the root). Only alive documents (`deleted_at IS NULL`) count.
 */
export class FolderCounts1763800100000 implements MigrationInterface {
  name = 'FolderCounts1763800100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE kb_folder_counts (
        folder  text COLLATE "C" PRIMARY KEY,
        subtree bigint NOT NULL,
        here    bigint NOT NULL
      )`);
    await queryRunner.query(`
      CREATE TABLE kb_folder_count_deltas (
        id      bigserial PRIMARY KEY,
        folder  text COLLATE "C" NOT NULL,
        subtree integer NOT NULL,
        here    integer NOT NULL
      )`);
    await queryRunner.query(
      `CREATE INDEX kb_folder_count_deltas_folder ON kb_folder_count_deltas (folder)`,
    );
    // The folders a document id counts in: every prefix up to a '/', the last one directly
    // (`here`); the root directly for a top-level document.
    await queryRunner.query(`
      CREATE FUNCTION kb_folders_of(id text) RETURNS TABLE (folder text, here boolean)
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT array_to_string(parts[1:n], '/'), n = cardinality(parts) - 1
          FROM string_to_array(id, '/') AS parts, generate_series(1, cardinality(parts) - 1) AS n
        UNION ALL
        SELECT '', true WHERE strpos(id, '/') = 0
      $$`);
    // The net change of a set of rows leaving (old) and arriving (new) alive.
    await queryRunner.query(`
      CREATE FUNCTION kb_folder_counts_add(gone text[], came text[]) RETURNS void
      LANGUAGE sql AS $$
        INSERT INTO kb_folder_count_deltas (folder, subtree, here)
        SELECT f.folder, sum(c.sign)::int, sum(CASE WHEN f.here THEN c.sign ELSE 0 END)::int
          FROM (SELECT unnest(gone) AS id, -1 AS sign UNION ALL SELECT unnest(came), 1) AS c,
               LATERAL kb_folders_of(c.id) AS f
         GROUP BY f.folder
        HAVING sum(c.sign) <> 0
      $$`);
    // Inserts and deletes: once per statement, over its transition table (a bulk create of
    // 500 documents appends one row per folder, not 500).
    await queryRunner.query(`
      CREATE FUNCTION kb_folder_counts_statement() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM kb_folder_counts_add('{}',
            ARRAY(SELECT document_id FROM arrived WHERE deleted_at IS NULL));
        ELSE
          PERFORM kb_folder_counts_add(
            ARRAY(SELECT document_id FROM departed WHERE deleted_at IS NULL), '{}');
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER kb_folder_counts_insert AFTER INSERT ON kb_documents
      REFERENCING NEW TABLE AS arrived
      FOR EACH STATEMENT EXECUTE FUNCTION kb_folder_counts_statement()`);
    await queryRunner.query(`
      CREATE TRIGGER kb_folder_counts_delete AFTER DELETE ON kb_documents
      REFERENCING OLD TABLE AS departed
      FOR EACH STATEMENT EXECUTE FUNCTION kb_folder_counts_statement()`);
    // Updates: only those that delete, restore or move a document, tested before any function
    // is called (the pipeline's frequent updates of vector_* columns cost nothing here).
    await queryRunner.query(`
      CREATE FUNCTION kb_folder_counts_row() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM kb_folder_counts_add(
          CASE WHEN OLD.deleted_at IS NULL THEN ARRAY[OLD.document_id] ELSE '{}' END,
          CASE WHEN NEW.deleted_at IS NULL THEN ARRAY[NEW.document_id] ELSE '{}' END);
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER kb_folder_counts_update AFTER UPDATE ON kb_documents FOR EACH ROW
      WHEN ((OLD.deleted_at IS NULL) IS DISTINCT FROM (NEW.deleted_at IS NULL)
            OR OLD.document_id IS DISTINCT FROM NEW.document_id)
      EXECUTE FUNCTION kb_folder_counts_row()`);
    // What the table holds now, counted once.
    await queryRunner.query(`
      INSERT INTO kb_folder_counts (folder, subtree, here)
      SELECT f.folder, count(*), count(*) FILTER (WHERE f.here)
        FROM kb_documents d, LATERAL kb_folders_of(d.document_id) AS f
       WHERE d.deleted_at IS NULL
       GROUP BY f.folder`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER kb_folder_counts_update ON kb_documents`);
    await queryRunner.query(`DROP TRIGGER kb_folder_counts_delete ON kb_documents`);
    await queryRunner.query(`DROP TRIGGER kb_folder_counts_insert ON kb_documents`);
    await queryRunner.query(`DROP FUNCTION kb_folder_counts_row()`);
    await queryRunner.query(`DROP FUNCTION kb_folder_counts_statement()`);
    await queryRunner.query(`DROP FUNCTION kb_folder_counts_add(text[], text[])`);
    await queryRunner.query(`DROP FUNCTION kb_folders_of(text)`);
    await queryRunner.query(`DROP TABLE kb_folder_count_deltas`);
    await queryRunner.query(`DROP TABLE kb_folder_counts`);
  }
}
