import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source-options';
import { AnchorFieldsRepository } from '../src/vectors/lexical/anchor-fields.repository';
import { LexicalRecordsRepository } from '../src/vectors/lexical/lexical-records.repository';
import { lexicalRecord } from '../src/vectors/lexical/lexical-record';
import { ANALYZER_VERSION } from '../src/vectors/text/analyzer';
import { createTestDatabase, type TestDatabase } from './support/database';
import { planNodes, statementsSent, type PlanNode, type SentStatement } from './support/explain';

/**
 * The plans of the probes of the anchor fields' sources (`anchor_sources && ids`: which
 * fields the documents being written, or read again, gave words to), over 300 000 lexical
 * records, 20 000 of them with sources: a lookup in the partial GIN index, never a scan of the
 * records. A probe per document once scanned the records each time (docs/search.md, "Anchor
 * text", what it costs).
 */
describe('plans of the anchor fields’ probes', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  /** The statements that probe the sources, as the repositories send them. */
  let sent: SentStatement[];

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
    // The tables filled as the pipeline would, without their triggers' bookkeeping.
    await dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL session_replication_role = replica`);
      await manager.query(
        `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
         SELECT format('f%s/doc-%s.md', i % 100, i), format('f%s', i % 100), format('Title %s', i), 'b', 'h'
           FROM generate_series(1, 300000) AS i`,
      );
      await manager.query(
        `INSERT INTO kb_lexical_documents
                (document_id, revision, analyzer, tags, lengths, passage_lengths, terms, postings,
                 anchor_sources)
         SELECT format('f%s/doc-%s.md', i % 100, i), 1, $1, '{}', '{0,0,0}', '{}', '', '',
                CASE WHEN i % 15 = 0
                     THEN ARRAY[format('f%s/doc-%s.md', (i + 1) % 100, i + 1),
                                format('f%s/doc-%s.md', (i + 2) % 100, i + 2)]
                     ELSE '{}' END
           FROM generate_series(1, 300000) AS i`,
        [ANALYZER_VERSION],
      );
    });
    await dataSource.query('VACUUM ANALYZE kb_documents, kb_lexical_documents');

    ({ sent } = await statementsSent(
      (text) => text.includes('anchor_sources &&'),
      async () => {
        // A document written again (the pipeline's write), then the fields its links gave words
        // to (the background job's read of a source).
        const text = 'Restore the replica from the nightly backup.';
        await new LexicalRecordsRepository(dataSource).write(
          [
            {
              documentId: 'f31/doc-31.md',
              revision: 2,
              tags: [],
              passages: [{ index: 0, heading: '', content: text }],
              record: lexicalRecord('Title 31', text, [{ headings: [], content: text }]),
            },
          ],
          [],
        );
        await new AnchorFieldsRepository(dataSource).sources(['f31/doc-31.md', 'f47/doc-47.md']);
      },
    ));
  }, 300_000);
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('sends both probes', () => {
    expect(sent).toHaveLength(2);
  });

  it.each([0, 1])('probe %i reads the sources through their GIN index', async (n) => {
    const { text, values } = sent[n];
    const [{ 'QUERY PLAN': plan }] = await dataSource.query(
      `EXPLAIN (FORMAT JSON) ${text}`,
      values,
    );
    const nodes = planNodes(plan[0].Plan as PlanNode);
    const on = (relation: string) =>
      nodes.filter((node) => node['Relation Name'] === relation).map((node) => node['Node Type']);
    expect(
      nodes.some(
        (node) =>
          node['Node Type'] === 'Bitmap Index Scan' &&
          node['Index Name'] === 'kb_lexical_documents_anchor_sources',
      ),
    ).toBe(true);
    expect(on('kb_lexical_documents')).not.toContain('Seq Scan');
  });
});
