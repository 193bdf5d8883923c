import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source-options';
import { VectorQueueRepository } from '../src/vectors/sync/vector-queue.repository';
import { ANALYZER_VERSION } from '../src/vectors/text/analyzer';
import { createTestDatabase, type TestDatabase } from './support/database';
import { planNodes, statementsSent, type PlanNode, type SentStatement } from './support/explain';

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
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
    await dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL session_replication_role = replica`);
      await manager.query(
        `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
         SELECT format('f%s/doc-%s.md', i % 100, i), format('f%s', i % 100), format('Title %s', i), 'b', 'h'
           FROM generate_series(1, 20000) AS i`,
      );
      // Every 4 000th written by the analyzer before this one.
      await manager.query(
        `INSERT INTO kb_lexical_documents
                (document_id, revision, analyzer, tags, lengths, passage_lengths, terms, postings)
         SELECT format('f%s/doc-%s.md', i % 100, i), 1,
                CASE WHEN i % 4000 = 0 THEN $1 - 1 ELSE $1 END, '{}', '{0,0,0}', '{}',
                repeat('term ', 40), ''
           FROM generate_series(1, 20000) AS i`,
        [ANALYZER_VERSION],
      );
    });
    await dataSource.query('VACUUM ANALYZE kb_documents, kb_lexical_documents');

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

  it.each(['auto', 'force_generic_plan'])(
    'reads them through the partial index (%s plans)',
    async (mode) => {
      expect(sent).toHaveLength(1);
      const { text, values } = sent[0];
      const plan = await dataSource.transaction(async (manager) => {
        await manager.query(`SET LOCAL plan_cache_mode = ${mode}`);
        await manager.query(`PREPARE older_probe AS ${text}`);
        const literal = (v: unknown) =>
          Array.isArray(v) ? `ARRAY[]::text[]` : typeof v === 'string' ? `'${v}'` : String(v);
        const [{ 'QUERY PLAN': json }] = await manager.query(
          `EXPLAIN (FORMAT JSON) EXECUTE older_probe(${values.map(literal).join(', ')})`,
        );
        await manager.query('DEALLOCATE older_probe');
        return json;
      });
      const nodes = planNodes(plan[0].Plan as PlanNode);
      const on = nodes.filter((node) => node['Relation Name'] === 'kb_lexical_documents');
      expect(on.map((node) => node['Index Name'])).toEqual(['kb_lexical_documents_older_analyzer']);
    },
  );

  it("is the index of this release's analyzer (a new analyzer builds it again)", async () => {
    const [{ indexdef }] = await dataSource.query(
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'kb_lexical_documents_older_analyzer'`,
    );
    expect(indexdef).toContain(`WHERE (analyzer <> ${ANALYZER_VERSION})`);
  });
});
