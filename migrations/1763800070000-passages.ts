import { MigrationInterface, QueryRunner } from 'typeorm';

/** Characters turned into spaces by kb_search_words, as SQL string literals. */
const PUNCTUATION = '.,;:!?/\\()[]{}<>=#|*~^$@"\'`+&%';
export const PUNCTUATION_SQL = `'${PUNCTUATION.replace(/'/g, "''")}'`;
export const SPACES_SQL = `'${' '.repeat(PUNCTUATION.length)}'`;

/**
 * The lexical side of search (docs/search.md): the same passages (chunks) the vector side embeds,
 * with a weighted full-text vector kept by the database (a generated column) and a GIN
 * index. Title A, heading path B, body C, each in two configurations: `simple` keeps
 * identifiers, option names and code tokens as written, `english` adds stems so that
 * "configuring" finds "configure". Written by the vector worker when it chunks a document,
 * before embedding, whatever the vector store, so lexical search keeps up even when the
 * embedder is down.
 *
 * Existing passages are copied from the PostgreSQL vector store's table where it holds the
 * current revision; any other alive document is queued to be chunked again.
 */
export class Passages1763800070000 implements MigrationInterface {
  name = 'Passages1763800070000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Punctuation inside identifiers, paths and links becomes space before parsing, so that
    // z.discriminatedUnion, docs/jwks/createRemoteJWKSet.md and [a](b) give their words
    // (the parser would otherwise keep host- or file-like tokens whole). ASCII only: letters
    // of every script stay as they are, whatever the database's locale.
    await queryRunner.query(`
      CREATE FUNCTION kb_search_words(text) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN translate($1, ${PUNCTUATION_SQL}, ${SPACES_SQL})`);
    await queryRunner.query(`
      CREATE TABLE kb_passages (
        document_id text COLLATE "C" NOT NULL
                    REFERENCES kb_documents (document_id) ON DELETE CASCADE,
        chunk_index integer NOT NULL CHECK (chunk_index >= 0),
        revision    integer NOT NULL,
        title       text NOT NULL,
        heading     text NOT NULL,
        content     text NOT NULL,
        search      tsvector GENERATED ALWAYS AS (
                      setweight(to_tsvector('simple'::regconfig, kb_search_words(title)), 'A') ||
                      setweight(to_tsvector('english'::regconfig, kb_search_words(title)), 'A') ||
                      setweight(to_tsvector('simple'::regconfig, kb_search_words(heading)), 'B') ||
                      setweight(to_tsvector('english'::regconfig, kb_search_words(heading)), 'B') ||
                      setweight(to_tsvector('simple'::regconfig, kb_search_words(content)), 'C') ||
                      setweight(to_tsvector('english'::regconfig, kb_search_words(content)), 'C')
                    ) STORED,
        PRIMARY KEY (document_id, chunk_index)
      )`);
    await queryRunner.query(`CREATE INDEX kb_passages_search ON kb_passages USING gin (search)`);
    await queryRunner.query(`
      INSERT INTO kb_passages (document_id, chunk_index, revision, title, heading, content)
      SELECT v.document_id, v.chunk_index, v.revision, v.title, v.heading, v.content
        FROM kb_chunk_vectors v
        JOIN kb_documents d ON d.document_id = v.document_id AND d.revision = v.revision
       WHERE d.deleted_at IS NULL`);
    await queryRunner.query(`
      UPDATE kb_documents d
         SET vector_status = 'pending', vector_queued_at = now(), vector_attempts = 0,
             vector_next_attempt_at = NULL, vector_error = NULL
       WHERE d.deleted_at IS NULL AND d.vector_status = 'ready'
         AND NOT EXISTS (SELECT 1 FROM kb_passages p WHERE p.document_id = d.document_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE kb_passages`);
    await queryRunner.query(`DROP FUNCTION kb_search_words(text)`);
  }
}
