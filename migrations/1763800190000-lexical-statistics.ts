import { MigrationInterface, QueryRunner } from 'typeorm';

/** Rows of `kb_lexical_stats`: writers add to the row of their connection, readers sum all. */
const STAT_ROWS = 16;

/**
 * What BM25 normalises by, kept as the lexical records change: the documents indexed and the
 * words of their titles, headings and bodies, the passages and their words
 * (`kb_lexical_stats`), added to by trigger in the statement that writes the records, so the
 * writer of a document's sparse vector for Qdrant (src/vectors/stores/qdrant/) reads the
 * knowledge base's mean lengths without a scan. Sixteen rows, each writer adding to the row of
 * its connection, so that concurrent pipeline transactions do not queue on one row; readers sum
 * them. `changed_at` tells when the records last changed.
 *
 * And the latent-semantic models whose document vectors the Qdrant collection holds
 * (`kb_qdrant_semantic`): the model searched (`active`) and the one whose vectors are being
 * written beside it (`building`), each under its own named vector of the collection.
 */
export class LexicalStatistics1763800190000 implements MigrationInterface {
  name = 'LexicalStatistics1763800190000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE kb_lexical_stats (
        slot          smallint PRIMARY KEY CHECK (slot >= 0 AND slot < ${STAT_ROWS}),
        documents     bigint NOT NULL DEFAULT 0,
        title_words   bigint NOT NULL DEFAULT 0,
        heading_words bigint NOT NULL DEFAULT 0,
        body_words    bigint NOT NULL DEFAULT 0,
        passages      bigint NOT NULL DEFAULT 0,
        passage_words bigint NOT NULL DEFAULT 0,
        changed_at    timestamptz
      )`);
    await queryRunner.query(`
      INSERT INTO kb_lexical_stats (slot)
      SELECT slot FROM generate_series(0, ${STAT_ROWS - 1}) AS slot`);
    await queryRunner.query(`
      UPDATE kb_lexical_stats s
         SET documents = t.documents, title_words = t.title_words,
             heading_words = t.heading_words, body_words = t.body_words,
             passages = t.passages, passage_words = t.passage_words, changed_at = now()
        FROM (SELECT count(*) AS documents,
                     coalesce(sum(lengths[1]), 0) AS title_words,
                     coalesce(sum(lengths[2]), 0) AS heading_words,
                     coalesce(sum(lengths[3]), 0) AS body_words,
                     coalesce(sum(cardinality(passage_lengths)), 0) AS passages,
                     coalesce(sum((SELECT sum(w) FROM unnest(passage_lengths) AS w)), 0)
                       AS passage_words
                FROM kb_lexical_documents) t
       WHERE s.slot = 0`);
    // One statement's rows, counted: `sign` 1 for rows added, -1 for rows taken away.
    const totals = (rows: string, sign: number) => `
      SELECT ${sign} * count(*) AS documents,
             ${sign} * coalesce(sum(lengths[1]), 0) AS title_words,
             ${sign} * coalesce(sum(lengths[2]), 0) AS heading_words,
             ${sign} * coalesce(sum(lengths[3]), 0) AS body_words,
             ${sign} * coalesce(sum(cardinality(passage_lengths)), 0) AS passages,
             ${sign} * (SELECT coalesce(sum(w), 0) FROM ${rows} r, unnest(r.passage_lengths) AS w)
               AS passage_words
        FROM ${rows}`;
    await queryRunner.query(`
      CREATE FUNCTION kb_lexical_count() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE kb_lexical_stats s
             SET documents = s.documents + d.documents,
                 title_words = s.title_words + d.title_words,
                 heading_words = s.heading_words + d.heading_words,
                 body_words = s.body_words + d.body_words,
                 passages = s.passages + d.passages,
                 passage_words = s.passage_words + d.passage_words, changed_at = now()
            FROM (${totals('added_rows', 1)}) d
           WHERE s.slot = pg_backend_pid() % ${STAT_ROWS} AND d.documents <> 0;
        ELSIF TG_OP = 'UPDATE' THEN
          UPDATE kb_lexical_stats s
             SET title_words = s.title_words + d.title_words,
                 heading_words = s.heading_words + d.heading_words,
                 body_words = s.body_words + d.body_words,
                 passages = s.passages + d.passages,
                 passage_words = s.passage_words + d.passage_words, changed_at = now()
            FROM (SELECT sum(title_words) AS title_words, sum(heading_words) AS heading_words,
                         sum(body_words) AS body_words, sum(passages) AS passages,
                         sum(passage_words) AS passage_words, sum(abs(documents)) AS rows
                    FROM (${totals('added_rows', 1)} UNION ALL ${totals('removed_rows', -1)}) u) d
           WHERE s.slot = pg_backend_pid() % ${STAT_ROWS} AND d.rows <> 0;
        ELSE
          UPDATE kb_lexical_stats s
             SET documents = s.documents + d.documents,
                 title_words = s.title_words + d.title_words,
                 heading_words = s.heading_words + d.heading_words,
                 body_words = s.body_words + d.body_words,
                 passages = s.passages + d.passages,
                 passage_words = s.passage_words + d.passage_words, changed_at = now()
            FROM (${totals('removed_rows', -1)}) d
           WHERE s.slot = pg_backend_pid() % ${STAT_ROWS} AND d.documents <> 0;
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER kb_lexical_count_insert AFTER INSERT ON kb_lexical_documents
      REFERENCING NEW TABLE AS added_rows
      FOR EACH STATEMENT EXECUTE FUNCTION kb_lexical_count()`);
    await queryRunner.query(`
      CREATE TRIGGER kb_lexical_count_update AFTER UPDATE ON kb_lexical_documents
      REFERENCING OLD TABLE AS removed_rows NEW TABLE AS added_rows
      FOR EACH STATEMENT EXECUTE FUNCTION kb_lexical_count()`);
    await queryRunner.query(`
      CREATE TRIGGER kb_lexical_count_delete AFTER DELETE ON kb_lexical_documents
      REFERENCING OLD TABLE AS removed_rows
      FOR EACH STATEMENT EXECUTE FUNCTION kb_lexical_count()`);

    await queryRunner.query(`
      CREATE TABLE kb_qdrant_semantic (
        collection text NOT NULL,
        slot       text NOT NULL CHECK (slot IN ('a', 'b')),
        state      text NOT NULL CHECK (state IN ('active', 'building')),
        analyzer   integer NOT NULL,
        model_id   text NOT NULL,
        dimensions integer NOT NULL,
        documents  integer NOT NULL,
        learnt_at  integer NOT NULL,
        terms      text NOT NULL,
        vectors    bytea NOT NULL,
        idf        bytea NOT NULL,
        saved_at   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (collection, slot)
      )`);
    await queryRunner.query(`
      CREATE UNIQUE INDEX kb_qdrant_semantic_state ON kb_qdrant_semantic (collection, state)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE kb_qdrant_semantic`);
    for (const event of ['insert', 'update', 'delete']) {
      await queryRunner.query(`DROP TRIGGER kb_lexical_count_${event} ON kb_lexical_documents`);
    }
    await queryRunner.query(`DROP FUNCTION kb_lexical_count()`);
    await queryRunner.query(`DROP TABLE kb_lexical_stats`);
  }
}
