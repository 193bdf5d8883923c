import { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './concurrent-index';

/**
 * The links' keys (kb_links.keys, 1763800200000) are looked up by their 64-bit hashes: the GIN
 * index holds `kb_link_key_hashes(keys)`, eight-byte integers, in place of the keys' text
 * (20–40 bytes each, compared byte by byte). Every write of a document with links pays for its
 * keys' index entries: in a bulk write of documents with 20 links each, about half of what the
 * link row costs the database (docs/performance.md, "Links"). The index is 2.5 × smaller too.
 * A lookup hashes the keys it asks for the same way. Two distinct keys of one hash would make
 * a document count among another's backlinks: with 64 bits, some 10⁻⁶ for any such pair among
 * ten million keys, and where a key is read back (each linking document's links, the keys it
 * holds) the text decides. Built without locking writers; between the build and the drop both
 * indexes are kept up.
 */
export class LinkKeyHashes1763800250000 implements MigrationInterface {
  name = 'LinkKeyHashes1763800250000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION kb_link_key_hashes(keys text[]) RETURNS bigint[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT ARRAY(SELECT hashtextextended(k, 0) FROM unnest(keys) AS k)
      $$`);
    await createIndexConcurrently(
      queryRunner,
      'kb_links_key_hashes',
      'ON kb_links USING gin (kb_link_key_hashes(keys)) WHERE alive',
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_links_keys`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'kb_links_keys',
      'ON kb_links USING gin (keys) WHERE alive',
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS kb_links_key_hashes`);
    await queryRunner.query(`DROP FUNCTION kb_link_key_hashes(text[])`);
  }
}
