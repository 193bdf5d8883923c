import { MigrationInterface, QueryRunner } from 'typeorm';

/** ASCII letters folded to lower case, whatever the database's collation (link-targets.ts `fold`). */
const FOLD = `'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'`;

/**
 * Links between documents (docs/documents.md, "Links between documents").
 *
 * `kb_links` holds, for each document whose body has links, the keys they are found by (one
 * per link: `=id`, `~path`, `@title`; src/documents/links/link-targets.ts) and their texts,
 * beside the document: the statement that writes a body writes its row (src/documents/
 * documents.repository.ts), so it is never stale. One row a document rather than one a link,
 * and the keys in a GIN index, because a bulk write of documents with 20 links each must cost
 * little more than one without (20 rows a document doubled the cost of the write). Which
 * document a key stands for is decided when links are read, against the documents alive then:
 * a link whose target is created later resolves then, one whose target is deleted is broken
 * until it is restored.
 *
 * A body written by anything that does not write its links (an older server during an
 * upgrade, a person with psql, a restore) is queued in `kb_links_pending`, and the server
 * extracts its links in the background; every document present now is queued here.
 *
 * The documents' names (an id's last segment, folded, without `.md`) and titles are indexed,
 * alive only, for the links that name a document by its path's tail or its title.
 */
export class Links1763800200000 implements MigrationInterface {
  name = 'Links1763800200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE kb_links (
        source_id text COLLATE "C" PRIMARY KEY,
        alive     boolean NOT NULL DEFAULT true,
        keys      text[] COLLATE "C" NOT NULL,
        labels    text[] NOT NULL
      )`);
    // Only alive documents' links are ever looked for; a deleted one's stay, for its restore.
    await queryRunner.query(`CREATE INDEX kb_links_keys ON kb_links USING gin (keys) WHERE alive`);
    await queryRunner.query(`
      CREATE TABLE kb_links_pending (
        document_id text COLLATE "C" PRIMARY KEY
      )`);

    await queryRunner.query(`
      CREATE FUNCTION kb_document_name(id text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT regexp_replace(translate(regexp_replace(id, '^.*/', ''), ${FOLD}), '\\.md$', '')
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION kb_title_key(title text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT translate(regexp_replace(btrim(title, E' \\t\\n\\r\\f\\v'), E'[ \\t\\n\\r\\f\\v]+', ' ', 'g'), ${FOLD})
      $$`);

    // What must follow every write of a body, an id or a deletion, whoever makes it. The
    // service's statements write a document's links themselves and say so (app.links); a
    // row they did not write in this transaction is then stale (its body has no links any
    // more) and goes, checked with a fresh look at the table, so a row the background
    // extraction committed meanwhile goes too. Anything else is queued for extraction.
    await queryRunner.query(`
      CREATE FUNCTION kb_documents_links() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        given boolean := current_setting('app.links', true) = 'given';
      BEGIN
        IF TG_OP = 'DELETE' THEN
          DELETE FROM kb_links WHERE source_id = OLD.document_id;
          DELETE FROM kb_links_pending WHERE document_id = OLD.document_id;
          RETURN NULL;
        END IF;
        IF TG_OP = 'UPDATE' AND OLD.document_id <> NEW.document_id THEN
          UPDATE kb_links SET source_id = NEW.document_id WHERE source_id = OLD.document_id;
          DELETE FROM kb_links_pending WHERE document_id = OLD.document_id;
          IF NOT given THEN
            INSERT INTO kb_links_pending VALUES (NEW.document_id) ON CONFLICT DO NOTHING;
          END IF;
        END IF;
        IF TG_OP = 'INSERT' OR OLD.body IS DISTINCT FROM NEW.body THEN
          IF given THEN
            -- A new document has no row but the one its statement wrote.
            IF TG_OP = 'UPDATE' THEN
              DELETE FROM kb_links
               WHERE source_id = NEW.document_id AND xmin <> pg_current_xact_id()::xid;
            END IF;
          ELSE
            DELETE FROM kb_links WHERE source_id = NEW.document_id;
            -- A body without a bracket or a kb:// URI has no link: nothing to read later.
            IF strpos(NEW.body, '[') > 0 OR strpos(NEW.body, 'kb://') > 0 THEN
              INSERT INTO kb_links_pending VALUES (NEW.document_id) ON CONFLICT DO NOTHING;
            END IF;
          END IF;
        END IF;
        IF TG_OP = 'UPDATE' AND (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL) THEN
          UPDATE kb_links SET alive = NEW.deleted_at IS NULL WHERE source_id = NEW.document_id;
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER kb_documents_links_write AFTER INSERT OR DELETE ON kb_documents
      FOR EACH ROW EXECUTE FUNCTION kb_documents_links()`);
    await queryRunner.query(`
      CREATE TRIGGER kb_documents_links_update AFTER UPDATE ON kb_documents FOR EACH ROW
      WHEN (OLD.body IS DISTINCT FROM NEW.body OR OLD.document_id <> NEW.document_id
            OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
      EXECUTE FUNCTION kb_documents_links()`);

    await queryRunner.query(
      `INSERT INTO kb_links_pending (document_id) SELECT document_id FROM kb_documents`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER kb_documents_links_update ON kb_documents`);
    await queryRunner.query(`DROP TRIGGER kb_documents_links_write ON kb_documents`);
    await queryRunner.query(`DROP FUNCTION kb_documents_links()`);
    await queryRunner.query(`DROP TABLE kb_links_pending`);
    await queryRunner.query(`DROP TABLE kb_links`);
    await queryRunner.query(`DROP FUNCTION kb_title_key(text)`);
    await queryRunner.query(`DROP FUNCTION kb_document_name(text)`);
  }
}
