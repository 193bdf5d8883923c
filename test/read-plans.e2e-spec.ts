import type { Client } from 'pg';
import { Access } from '../src/documents/access';
import { DocumentListingsRepository } from '../src/documents/document-listings.repository';
import { DocumentListingsService } from '../src/documents/document-listings.service';
import { FolderCountsRepository } from '../src/documents/folder-counts.repository';
import { PreparedStatements } from '../src/database/prepared-statements';
import {
  analyzedPlan,
  PLAN_MODES,
  preparedPlan,
  rowsRead,
  rowsReadBy,
  type PlanMode,
  withoutTriggers,
  type PlanNode,
} from './support/explain';
import { startTestApp, TestApp } from './support/app';
import { VectorQueueStatus } from '../src/vectors/sync/vector-queue-status.repository';

/**
 * The reads' plans on a table of realistic shape: 302 000 alive documents in 2 100 folders,
 * among them a folder of 20 000 (`big/`), folders of 6 000 (`scale/dNN/`, a fiftieth of the
 * table) and one of 50 (`team-a/`, what an access policy grants).
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
    // The plans read kb_documents and its folder counts only: the audit trail of 302 000
    // creations (a row and a change notification each) would take most of the load's time
    // and change no plan here. The folder counts' triggers stay on.
    await withoutTriggers(
      db,
      ['kb_documents_audit_write', 'kb_documents_vector_sync_write'],
      async () => {
        // big/: one folder of 20 000; scale/: 46 folders of 6 000 (a fiftieth of the table each,
        // as a folder among 50 of a million documents); other/: 3 950 in 50 folders and 2 000
        // alone in a folder each (a knowledge base has folders by the thousand, and so does the
        // table of their counts); and the 50 documents of team-a/.
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
           SELECT format('other/g%s/doc.md', i), format('other/g%s', i), 'T', 'b', 'h'
             FROM generate_series(1, 2000) AS i ORDER BY md5(i::text)`,
        );
        await db.query(
          `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
           SELECT format('team-a/doc-%s.md', lpad(i::text, 2, '0')), 'team-a', 'T', 'b', 'h'
             FROM generate_series(1, 50) AS i`,
        );
        // Documents arrive in no particular order of id (md5 above): a table filled in id order
        // would let an index scan read the heap in order, and hide the plans a real one gets.
      },
    );
    // The load's folder count deltas folded now, as the server's timer does within 10 s.
    await t.app.get(FolderCountsRepository).fold();
    // As after a bulk load: statistics, and the visibility map that index-only scans read. The
    // counts' statistics too, which autovacuum takes at a time of its own: a table of them
    // known to hold a hundred rows (one page) is read whole rather than looked up, which
    // passed or failed this file by the machine's timing.
    await db.query('VACUUM ANALYZE kb_documents, kb_folder_counts, kb_folder_count_deltas');
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
        if (offset === 0) {
          expectOrderedRead(nodes, limit + 1);
        } else {
          // The offset is skipped in the index alone; only the page's rows are read whole.
          expectOrderedRead(nodes, offset + 2 * (limit + 1));
          expect(nodes.map((node) => node['Node Type'])).toContain('Index Only Scan');
        }
      },
    );

    it.each([
      ['the first page', null, '', 101],
      ['a page after an id in a folder of 20 000', 'big/doc-04000.md', '', 101],
      ['the first page of a granted folder', null, 'team-a/', 101],
      ['a page inside a granted folder', 'team-a/doc-20.md', 'team-a/', 101],
      ['a granted folder after an id before it', 'big/doc-00001.md', 'scale/d07/', 101],
    ])(
      'pages by cursor: %s, reading one page',
      async (_label, after: string | null, range: string, limit: number) => {
        const [sql, params] = listings.pageQueryForExplain(after, range, limit);
        expectOrderedRead(await preparedPlan(db, sql, params, mode), limit);
      },
    );

    it.each([
      ['in a folder of 20 000', 'big/doc-1'],
      ['at the root', ''],
      ['in a folder of 50', 'team-a/'],
    ])('completes ids %s, reading what it returns', async (_label, prefix: string) => {
      const [sql, params] = listings.idsQueryForExplain(prefix, 21);
      expectOrderedRead(await preparedPlan(db, sql, params, mode), 21);
    });

    it.each([
      ['at the root', '', 8],
      ['under scale/', 'scale/', 46],
    ])(
      'completes folders %s with one index probe a folder, not a read of their documents',
      async (_label, prefix: string, folders: number) => {
        const [sql, params] = listings.foldersQueryForExplain(prefix, 101);
        const nodes = await preparedPlan(db, sql, params, mode);
        expect(nodes.map((node) => node['Node Type'])).not.toContain('Seq Scan');
        expect(rowsReadBy(nodes)).toBeLessThanOrEqual(folders + 1);
      },
    );
  });

  describe('under an access policy, the readable folders as ranges of the index', () => {
    /** Statements the listings ran, and the rows their plans read. */
    async function rowsReadFor(read: () => Promise<unknown>): Promise<number> {
      const statements = t.app.get(PreparedStatements);
      const seen: Array<[string, unknown[]]> = [];
      const query = statements.query.bind(statements);
      const spy = jest
        .spyOn(statements, 'query')
        .mockImplementation(async (name: string, text: string, values: unknown[]) => {
          seen.push([text, values]);
          return query(name, text, values);
        });
      try {
        await read();
      } finally {
        spy.mockRestore();
      }
      let rows = 0;
      for (const [text, values] of seen) rows += await rowsRead(db, text, values);
      return rows;
    }
    const service = () => t.app.get(DocumentListingsService);
    const oneFolder = new Access(['team-a/'], []);
    // Readable: 50 documents at the end of the index, 80 in one of 50 folders of other/.
    const twoFolders = new Access(['team-a/', 'other/f7/'], []);

    it('lists the root granted one folder of 50 among 302 000, reading one page', async () => {
      const page = await service().list({ limit: 50 }, oneFolder);
      expect(page.items).toHaveLength(50);
      expect(await rowsReadFor(() => service().list({ limit: 50 }, oneFolder))).toBeLessThanOrEqual(
        51,
      );
    });

    it('lists two granted folders in order, an offset crossing from one to the other', async () => {
      const all = (
        await db.query<{ document_id: string }>(
          `SELECT document_id FROM kb_documents WHERE deleted_at IS NULL
            AND (document_id LIKE 'other/f7/%' OR document_id LIKE 'team-a/%')
          ORDER BY document_id`,
        )
      ).rows.map((row) => row.document_id);
      expect(all).toHaveLength(79 + 50);
      const page = await service().list({ limit: 50, offset: 60 }, twoFolders);
      expect(page.items.map((item) => item.document_id)).toEqual(all.slice(60, 110));
      // The 79 of the first folder skipped by its count row, not read: the count rows (two
      // lookups), the one id skipped in the second and the page's ids in its index, and the
      // page's rows.
      expect(
        await rowsReadFor(() => service().list({ limit: 50, offset: 80 }, twoFolders)),
      ).toBeLessThanOrEqual(2 + 1 + 51 + 51);
    });

    it('pages by cursor across the granted folders, reading one page each time', async () => {
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await service().pageAfter(after, 40, twoFolders);
        seen.push(...page.items.map((item) => item.document_id));
        if (!page.more) break;
        after = page.items.at(-1)!.document_id;
      }
      expect(seen).toHaveLength(129);
      expect(
        await rowsReadFor(() => service().pageAfter(after, 40, twoFolders)),
      ).toBeLessThanOrEqual(41);
    });

    it('completes ids and folders, and shows the tree, without reading outside the grants', async () => {
      expect((await service().completeIds('', 5, oneFolder)).values).toEqual([
        'team-a/doc-01.md',
        'team-a/doc-02.md',
        'team-a/doc-03.md',
        'team-a/doc-04.md',
        'team-a/doc-05.md',
      ]);
      expect((await service().completeFolders('', 10, twoFolders)).values).toEqual([
        'other',
        'team-a',
      ]);
      const tree = await service().folderTree(undefined, twoFolders);
      expect(tree).toEqual({
        parent: null,
        documents_here: 0,
        folders: [
          { folder: 'other', documents: 79 },
          { folder: 'team-a', documents: 50 },
        ],
        truncated: false,
      });
      for (const read of [
        () => service().completeIds('', 5, oneFolder),
        () => service().completeFolders('', 10, twoFolders),
        () => service().folderTree(undefined, twoFolders),
      ]) {
        expect(await rowsReadFor(read)).toBeLessThanOrEqual(10);
      }
    });
  });

  it("counts the status's lexical coverage reading each table once, not probing a record per document", async () => {
    // Records for the folder of 20 000, written without the lexical index's own bookkeeping
    // (its change log and totals), which no plan here reads.
    await db.query(`ALTER TABLE kb_lexical_documents DISABLE TRIGGER USER`);
    try {
      await db.query(
        `INSERT INTO kb_lexical_documents
                (document_id, revision, analyzer, tags, lengths, passage_lengths, terms, postings)
         SELECT document_id, revision, 1, '{}', '{1,1,1}', '{1}', 't', '' FROM kb_documents
          WHERE document_id LIKE 'big/%'`,
      );
    } finally {
      await db.query(`ALTER TABLE kb_lexical_documents ENABLE TRIGGER USER`);
    }
    await db.query('ANALYZE kb_lexical_documents');
    const [sql, params] = t.app.get(VectorQueueStatus).lexicalCoverageQueryForExplain(1, []);
    const nodes = await analyzedPlan(db, sql, params);
    // EXISTS inside count(*) FILTER was a SubPlan run once per document: 302 000 index probes.
    expect(nodes.some((node) => /Join$/.test(node['Node Type']))).toBe(true);
    for (const node of nodes) expect(node['Actual Loops'] ?? 1).toBeLessThanOrEqual(3);
    const { rows } = await db.query(sql, params);
    expect(rows[0]).toEqual({ indexable: 302_000, indexed: 20_000 });
  });

  describe('as the server runs them', () => {
    /** How often each named statement ran with a generic plan and with one made for its values. */
    async function plansOf(statements: PreparedStatements, names: string[]) {
      const rows = await statements.query<{ name: string; generic: string; custom: string }>(
        'test_prepared_statements',
        `SELECT name, generic_plans AS generic, custom_plans AS custom
           FROM pg_prepared_statements WHERE name = ANY($1::text[])`,
        [names],
      );
      return Object.fromEntries(
        rows.map((row) => [row.name, { generic: Number(row.generic), custom: Number(row.custom) }]),
      );
    }

    it('runs every listing with its generic plan, never planning it again for the values', async () => {
      // Left to choose, PostgreSQL plans these again at each call once a folder is large: a
      // LIMIT $n is estimated as a tenth of the rows a range may hold, so the generic plan looks
      // dearer than one made for the values, and each page paid its planning again.
      const statements = t.app.get(PreparedStatements);
      const service = t.app.get(DocumentListingsService);
      const all = Access.EVERYTHING;
      const names = [
        'kb_documents_list_prefix',
        'kb_documents_ids_range',
        'kb_documents_page_after_in',
      ];
      // One after another, each statement on the connection the last one used (earlier tests
      // of this file may have run them there already: the counts are compared).
      const before = await plansOf(statements, names);
      for (let i = 0; i < 8; i++) {
        await service.list({ prefix: 'big/', limit: 50 }, all);
        await service.completeIds('scale/d07/', 100, all);
        await service.pageAfter('big/doc-10000.md', 50, new Access(['big/'], []));
      }
      const after = await plansOf(statements, names);
      for (const name of names) {
        const ran = before[name] ?? { generic: 0, custom: 0 };
        expect({ name, ...after[name] }).toEqual({
          name,
          generic: ran.generic + 8,
          custom: 0,
        });
      }
    });
  });
});
