import type { Client } from 'pg';
import { createTestDatabase, TestDatabase } from './support/database';

/**
 * The lexical records' counts kept by trigger (`kb_lexical_stats`, read by the writer of the
 * documents' sparse vectors for Qdrant instead of a scan): after inserts, the pipeline's
 * upserts of newer revisions, anchor fields written beside them, deletes and a statement that
 * changes nothing, from several connections (each adds to its own row), the sums equal a count
 * of the table itself.
 */
describe('kb_lexical_stats', () => {
  let db: TestDatabase;
  let clients: Client[];

  beforeAll(async () => {
    db = await createTestDatabase();
    clients = await Promise.all([db.client(), db.client(), db.client()]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end()));
    await db.drop();
  });

  const kept = async () =>
    (
      await clients[0].query(
        `SELECT sum(documents)::int AS documents, sum(title_words)::int AS title,
                sum(heading_words)::int AS headings, sum(body_words)::int AS body,
                sum(passages)::int AS passages, sum(passage_words)::int AS passage_words,
                sum(anchor_words)::int AS anchors
           FROM kb_lexical_stats`,
      )
    ).rows[0];
  const counted = async () =>
    (
      await clients[0].query(
        `SELECT count(*)::int AS documents, coalesce(sum(lengths[1]), 0)::int AS title,
                coalesce(sum(lengths[2]), 0)::int AS headings,
                coalesce(sum(lengths[3]), 0)::int AS body,
                coalesce(sum(cardinality(passage_lengths)), 0)::int AS passages,
                coalesce(sum((SELECT sum(w) FROM unnest(passage_lengths) w)), 0)::int
                  AS passage_words,
                coalesce(sum(anchor_length), 0)::int AS anchors
           FROM kb_lexical_documents`,
      )
    ).rows[0];
  /** Upserts records as the pipeline does: a newer revision replaces an older one. */
  const upsert = (client: Client, from: number, to: number, revision: number, scale: number) =>
    client.query(
      `INSERT INTO kb_lexical_documents AS l
              (document_id, revision, analyzer, tags, lengths, passage_lengths, terms, postings)
       SELECT 's/' || g || '.md', $3, 1, '{}', ARRAY[g % 3, g % 5, $4 * g],
              ARRAY[g % 7, $4 * (g % 11)], 'a', '\\x0000000000000000'
         FROM generate_series($1::int, $2::int) g
       ON CONFLICT (document_id) DO UPDATE
          SET revision = EXCLUDED.revision, lengths = EXCLUDED.lengths,
              passage_lengths = EXCLUDED.passage_lengths
        WHERE l.revision < EXCLUDED.revision`,
      [from, to, revision, scale],
    );

  it('equals the table after inserts, upserts, deletes and empty statements from several connections', async () => {
    await clients[0].query(`
      INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
      SELECT 's/' || g || '.md', 's', 'S', 'b', 'h' FROM generate_series(1, 400) g`);
    await Promise.all([
      upsert(clients[0], 1, 150, 1, 1),
      upsert(clients[1], 151, 300, 1, 2),
      upsert(clients[2], 301, 400, 1, 3),
    ]);
    expect(await kept()).toEqual(await counted());
    // Newer revisions of some, older ones (refused) of others, a mix in one statement.
    await upsert(clients[1], 100, 250, 2, 5);
    await upsert(clients[2], 50, 120, 1, 9);
    expect(await kept()).toEqual(await counted());
    // Anchor fields written beside the records (the anchor-fields job's update).
    await clients[1].query(
      `UPDATE kb_lexical_documents SET anchor_length = length(document_id)
        WHERE document_id LIKE 's/2%' OR document_id LIKE 's/1%'`,
    );
    expect((await kept()).anchors).toBeGreaterThan(0);
    expect(await kept()).toEqual(await counted());
    await clients[0].query(`DELETE FROM kb_lexical_documents WHERE document_id LIKE 's/1%'`);
    await clients[1].query(`DELETE FROM kb_lexical_documents WHERE document_id = 'nothing'`);
    await clients[2].query(`UPDATE kb_lexical_documents SET revision = revision WHERE false`);
    expect(await kept()).toEqual(await counted());
    expect((await counted()).documents).toBeGreaterThan(200);
  });
});
