import type { Client } from 'pg';
import { Access } from '../src/documents/access';
import { DocumentListingsRepository } from '../src/documents/document-listings.repository';
import {
  PLAN_MODES,
  preparedPlan,
  rowsReadBy,
  type PlanMode,
  type PlanNode,
} from './support/explain';
import { startTestApp, TestApp } from './support/app';

/**
 * The reads' plans on a table of realistic shape: 300 000 alive documents, among them a
 * folder of 20 000 (`big/`), folders of 6 000 (`scale/dNN/`, a fiftieth of the table) and one
 * of 50 (`team-a/`, what an access policy grants).
 * A plan that holds at 10 000 rows may not hold here: a folder of 20 000 is where a sort of
 * the whole folder, or a scan that reads it all for one page, shows. Each statement is
 * checked in the plan it runs with after a few executions, and in both kinds of plan
 * PostgreSQL may choose for it, since the values (and so the estimates) change by request.
 */
describe('read plans over 300 000 documents', () => {
  let t: TestApp;
  let db: Client;
  let listings: DocumentListingsRepository;

  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
    listings = t.app.get(DocumentListingsRepository);
    // big/: one folder of 20 000; scale/: 46 folders of 6 000 (a fiftieth of the table each,
    // as a folder among 50 of a million documents); other/: 3 950 in 50 folders; and the 50
    // documents of team-a/.
    await db.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
       SELECT format('big/doc-%s.md', lpad(i::text, 5, '0')), 'big', 'T', 'b', 'h'
         FROM generate_series(0, 19999) AS i ORDER BY md5(i::text)`,
    );
    await db.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
       SELECT format('scale/d%s/doc-%s.md', lpad((i / 6000)::text, 2, '0'), lpad(i::text, 6, '0')),
              format('scale/d%s', lpad((i / 6000)::text, 2, '0')), 'T', 'b', 'h'
         FROM generate_series(0, 275999) AS i ORDER BY md5(i::text)`,
    );
    await db.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
       SELECT format('other/f%s/doc-%s.md', i % 50, i), format('other/f%s', i % 50), 'T', 'b', 'h'
         FROM generate_series(1, 3950) AS i ORDER BY md5(i::text)`,
    );
    await db.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
       SELECT format('team-a/doc-%s.md', lpad(i::text, 2, '0')), 'team-a', 'T', 'b', 'h'
         FROM generate_series(1, 50) AS i`,
    );
    // Documents arrive in no particular order of id (md5 above): a table filled in id order
    // would let an index scan read the heap in order, and hide the plans a real one gets.
    // As after a bulk load: statistics, and the visibility map that index-only scans read.
    await db.query('VACUUM ANALYZE kb_documents');
  }, 120_000);
  afterAll(() => t.close());

  /** Index scans in id order, no sort, no bitmap of the whole range, reading at most `most` rows. */
  function expectOrderedRead(nodes: readonly PlanNode[], most: number): void {
    const types = nodes.map((node) => node['Node Type']);
    expect(types).not.toContain('Seq Scan');
    expect(types).not.toContain('Sort');
    expect(types).not.toContain('Incremental Sort');
    expect(types).not.toContain('Bitmap Heap Scan');
    expect(types.some((type) => /^Index( Only)? Scan$/.test(type))).toBe(true);
    expect(rowsReadBy(nodes)).toBeLessThanOrEqual(most);
  }

  const teamA = new Access(['team-a/'], []);

  describe.each(PLAN_MODES.map((mode) => [mode]))('in %s plans', (mode: PlanMode) => {
    it.each([
      ['a folder of 20 000, first page', 'big/', 50, 0],
      ['a folder of 20 000, page 21', 'big/', 50, 1000],
      ['a folder of 6 000, first page', 'scale/d07/', 50, 0],
      ['a folder of 6 000, page 3', 'scale/d07/', 50, 100],
      ['a folder of 50', 'team-a/', 50, 0],
      ['a prefix ending mid-name', 'scale/d0', 50, 0],
      ['a folder of 276 000', 'scale/', 100, 0],
      ['the root', '', 50, 0],
      ['the root, page 101', '', 50, 5000],
    ])(
      'lists %s in id order, reading one page',
      async (_label, prefix: string, limit: number, offset: number) => {
        const [sql, params] = listings.listQueryForExplain(prefix, limit, offset);
        const nodes = await preparedPlan(db, sql, params, mode);
        console.log(
          mode,
          prefix,
          offset,
          nodes.map((n) => `${n['Node Type']}:${n['Actual Rows']}`).join(' '),
        );
        expectOrderedRead(nodes, offset + limit + 1);
      },
    );

    it.each([
      ['the root', ''],
      ['the granted folder', 'team-a/'],
    ])(
      'lists %s under a policy granting one folder of 50 as that folder alone',
      async (_label, prefix: string) => {
        const scope = teamA.scopeUnder(prefix)!;
        const [sql, params] = listings.listQueryForExplain(scope.prefix, 50, 0, scope.readable);
        expectOrderedRead(await preparedPlan(db, sql, params, mode), 51);
      },
    );
  });
});
