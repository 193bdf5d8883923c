import { DataSource } from 'typeorm';
import { VectorQueueRepository } from '../src/vectors/sync/vector-queue.repository';
import { ANALYZER_VERSION } from '../src/vectors/text/analyzer';
import { type TestDatabase } from './support/database';
import {
  filledForPlans,
  preparedPlan,
  statementsSent,
  type SentStatement,
} from './support/explain';

/**
 * The analyzer pass's reads (the records another text analyzer wrote, written again at start)
 * over 20 000 lexical records, a few of them of an older analyzer: through the partial index
 * of those records, never a scan of the table. Every start asks once whether there is work;
 * that check read the whole table (some 200 ms at 200 000 documents).
 */
describe('plans of the analyzer pass', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let sent: SentStatement[];
  let found: Array<{ document_id: string }>;

  beforeAll(async () => {
    // Every 4 000th written by the analyzer before this one.
    ({ db, dataSource } = await filledForPlans(20_000, {
      columns: 'document_id, revision, analyzer, tags, lengths, passage_lengths, terms, postings',
      select: `format('f%s/doc-%s.md', i % 100, i), 1,
               CASE WHEN i % 4000 = 0 THEN $1::int - 1 ELSE $1::int END, '{}', '{0,0,0}', '{}',
               repeat('term ', 40), ''`,
      values: [ANALYZER_VERSION],
    }));
    ({ result: found, sent } = await statementsSent(
      (text) => text.includes('FROM kb_lexical_documents l'),
      () => new VectorQueueRepository(dataSource).olderAnalyzer('', ANALYZER_VERSION, [], 10),
    ));
  }, 300_000);
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('finds the records of the older analyzer', () => {
    expect(found.map((row) => row.document_id)).toEqual(
      [4000, 8000, 12000, 16000, 20000].map((i) => `f0/doc-${i}.md`).sort(),
    );
  });

  it.each(['auto', 'force_generic_plan'] as const)(
    'reads them through the partial index (%s plans)',
    async (mode) => {
      expect(sent).toHaveLength(1);
      const { text, values } = sent[0];
      const nodes = await preparedPlan(await db.client(), text, values, mode);
      // An index scan of it, or a bitmap of it: the planner's choice varies with the sample
      // its statistics read.
      const indexes = nodes.map((node) => node['Index Name']).filter((name) => name);
      expect(indexes).toContain('kb_lexical_documents_older_analyzer');
      expect(indexes).not.toContain('kb_lexical_documents_pkey');
      const on = nodes.filter((node) => node['Relation Name'] === 'kb_lexical_documents');
      expect(on.map((node) => node['Node Type'])).not.toContain('Seq Scan');
    },
  );

  it("is the index of this release's analyzer (a new analyzer builds it again)", async () => {
    const [{ indexdef }] = await dataSource.query(
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'kb_lexical_documents_older_analyzer'`,
    );
    expect(indexdef).toContain(`WHERE (analyzer <> ${ANALYZER_VERSION})`);
  });
});
