import { MigrationInterface, QueryRunner } from 'typeorm';

/** Rows of `kb_lexical_stats` (see its migration). */
const STAT_ROWS = 16;

/**
 * Anchor text (docs/search.md, "Anchor text"): the words of the links pointing at a document
 * are a field of its lexical record, kept beside the record the pipeline analyses
 * (`anchor_terms`, one count a term in `anchor_counts`, `anchor_length`; `anchor_stamp` counts
 * its writes, for the servers' copies of the index to tell it changed), with the documents
 * they were read from (`anchor_sources`, indexed where not empty: which fields a document's
 * links gave words to). `kb_anchors_due` lists what is to be read again: a document's anchor
 * field (`target`), where a document's links now point (`source`), or the links that may name
 * a document that came, went or was retitled (`name`, with the `title` it has or had); a
 * reader claims rows for
 * a while (`claimed_until`) and takes away those not queued again since (a row queued again
 * while claimed stays claimed, so no two readers ever read one document at once). Removing a
 * record queues by trigger what it may change. The counts of
 * `kb_lexical_stats` gain the anchor fields' words, for their mean length; every document that
 * links is queued once, so the fields of a knowledge base indexed before are read.
 */
export class AnchorText1763800210000 implements MigrationInterface {
  name = 'AnchorText1763800210000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE kb_lexical_documents
        ADD COLUMN anchor_terms   text NOT NULL DEFAULT '',
        ADD COLUMN anchor_counts  bytea NOT NULL DEFAULT '\\x',
        ADD COLUMN anchor_length  integer NOT NULL DEFAULT 0,
        ADD COLUMN anchor_stamp   integer NOT NULL DEFAULT 0,
        ADD COLUMN anchor_sources text[] NOT NULL DEFAULT '{}'`);
    // Partial: the records no link gives words to (most) have no entry, and cost their writes
    // nothing here.
    await queryRunner.query(`
      CREATE INDEX kb_lexical_documents_anchor_sources ON kb_lexical_documents
       USING gin (anchor_sources) WHERE anchor_sources <> '{}'`);
    await queryRunner.query(
      `ALTER TABLE kb_lexical_stats ADD COLUMN anchor_words bigint NOT NULL DEFAULT 0`,
    );
    await queryRunner.query(countFunction(true));
    await queryRunner.query(`
      CREATE TABLE kb_anchors_due (
        document_id   text NOT NULL,
        kind          text NOT NULL CHECK (kind IN ('target', 'source', 'name')),
        title         text NOT NULL DEFAULT '',
        queued_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
        claimed_until timestamptz,
        PRIMARY KEY (document_id, kind, title)
      )`);
    await queryRunner.query(`CREATE INDEX kb_anchors_due_queued ON kb_anchors_due (queued_at)`);
    // A record removed however it is (the pipeline, a move, a cascade): where its links and
    // the links that gave it words point now, and the links that may have named it.
    await queryRunner.query(`
      CREATE FUNCTION kb_anchors_removed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO kb_anchors_due (document_id, kind, title)
        SELECT id, kind, title FROM (
          SELECT document_id AS id, 'source' AS kind, '' AS title FROM removed_rows
          UNION
          SELECT unnest(anchor_sources), 'source', '' FROM removed_rows
          UNION
          SELECT d.document_id, 'name', d.title
            FROM removed_rows r JOIN kb_documents d ON d.document_id = r.document_id) AS due
        ORDER BY id, kind, title
        ON CONFLICT (document_id, kind, title) DO UPDATE SET queued_at = clock_timestamp();
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER kb_anchors_removed AFTER DELETE ON kb_lexical_documents
      REFERENCING OLD TABLE AS removed_rows
      FOR EACH STATEMENT EXECUTE FUNCTION kb_anchors_removed()`);
    await queryRunner.query(`
      INSERT INTO kb_anchors_due (document_id, kind)
      SELECT source_id, 'source' FROM kb_links WHERE alive
      ON CONFLICT DO NOTHING`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER kb_anchors_removed ON kb_lexical_documents`);
    await queryRunner.query(`DROP FUNCTION kb_anchors_removed()`);
    await queryRunner.query(`DROP TABLE kb_anchors_due`);
    await queryRunner.query(countFunction(false));
    await queryRunner.query(`ALTER TABLE kb_lexical_stats DROP COLUMN anchor_words`);
    await queryRunner.query(`
      ALTER TABLE kb_lexical_documents
        DROP COLUMN anchor_terms, DROP COLUMN anchor_counts, DROP COLUMN anchor_length,
        DROP COLUMN anchor_stamp,
        DROP COLUMN anchor_sources`);
  }
}

/**
 * `kb_lexical_count()` of migration 1763800190000, counting the anchor fields' words too
 * (`anchors`) or as it was.
 */
function countFunction(anchors: boolean): string {
  const columns = [
    ['title_words', 'coalesce(sum(lengths[1]), 0)'],
    ['heading_words', 'coalesce(sum(lengths[2]), 0)'],
    ['body_words', 'coalesce(sum(lengths[3]), 0)'],
    ['passages', 'coalesce(sum(cardinality(passage_lengths)), 0)'],
    ...(anchors ? [['anchor_words', 'coalesce(sum(anchor_length), 0)']] : []),
  ];
  const names = [...columns.map(([name]) => name), 'passage_words'];
  const totals = (rows: string, sign: number) => `
      SELECT ${sign} * count(*) AS documents,
             ${columns.map(([name, sum]) => `${sign} * ${sum} AS ${name}`).join(',\n             ')},
             ${sign} * (SELECT coalesce(sum(w), 0) FROM ${rows} r, unnest(r.passage_lengths) AS w)
               AS passage_words
        FROM ${rows}`;
  const add = names.map((name) => `${name} = s.${name} + d.${name}`).join(',\n                 ');
  const slot = `s.slot = pg_backend_pid() % ${STAT_ROWS}`;
  return `
      CREATE OR REPLACE FUNCTION kb_lexical_count() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE kb_lexical_stats s
             SET documents = s.documents + d.documents,
                 ${add}, changed_at = now()
            FROM (${totals('added_rows', 1)}) d
           WHERE ${slot} AND d.documents <> 0;
        ELSIF TG_OP = 'UPDATE' THEN
          UPDATE kb_lexical_stats s
             SET ${add}, changed_at = now()
            FROM (SELECT ${names.map((name) => `sum(${name}) AS ${name}`).join(', ')},
                         sum(abs(documents)) AS rows
                    FROM (${totals('added_rows', 1)} UNION ALL ${totals('removed_rows', -1)}) u) d
           WHERE ${slot} AND d.rows <> 0;
        ELSE
          UPDATE kb_lexical_stats s
             SET documents = s.documents + d.documents,
                 ${add}, changed_at = now()
            FROM (${totals('removed_rows', -1)}) d
           WHERE ${slot} AND d.documents <> 0;
        END IF;
        RETURN NULL;
      END $$`;
}
