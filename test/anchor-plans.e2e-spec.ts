import { DataSource } from 'typeorm';
import { AnchorFieldsRepository } from '../src/vectors/lexical/anchor-fields.repository';
import { LexicalRecordsRepository } from '../src/vectors/lexical/lexical-records.repository';
import { lexicalRecord } from '../src/vectors/lexical/lexical-record';
import { ANALYZER_VERSION } from '../src/vectors/text/analyzer';
import { type TestDatabase } from './support/database';
import {
  filledForPlans,
  planNodes,
  statementsSent,
  type PlanNode,
  type SentStatement,
} from './support/explain';

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
    ({ db, dataSource } = await filledForPlans(300_000, {
      columns: `document_id, revision, analyzer, tags, lengths, passage_lengths, terms, postings,
                anchor_sources`,
      select: `format('f%s/doc-%s.md', i % 100, i), 1, $1::int, '{}', '{0,0,0}', '{}', '', '',
               CASE WHEN i % 15 = 0
                    THEN ARRAY[format('f%s/doc-%s.md', (i + 1) % 100, i + 1),
                               format('f%s/doc-%s.md', (i + 2) % 100, i + 2)]
                    ELSE '{}' END`,
      values: [ANALYZER_VERSION],
    }));
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
