import type { Client } from 'pg';
import request from 'supertest';
import { DocumentListingsRepository } from '../src/documents/document-listings.repository';
import { FolderCountsRepository } from '../src/documents/folder-counts.repository';
import { analyzedPlan, genericPlan, rowsRead } from './support/explain';
import { startTestApp, TestApp } from './support/app';
import { expectInvalidParameter, insertIds } from './documents-helpers';

type Tree = {
  parent: string | null;
  documents_here: number;
  folders: Array<{ folder: string; documents: number }>;
  truncated: boolean;
};

/** Folders in the order the tree lists them: byte order of `folder/`. */
function byteOrder(folders: string[]): string[] {
  return [...folders].sort((a, b) => Buffer.compare(Buffer.from(`${a}/`), Buffer.from(`${b}/`)));
}

/**
 * The folder tree (`GET /documents/folders`, docs/documents.md): a folder's subfolders with
 * the alive documents of their subtrees, the documents directly in it, ids with characters
 * that mean something to LIKE or to a URL, the 500-folder cap, and its plans with 10 000
 * documents in one folder. What an access policy hides from it is in
 * access-control.e2e-spec.ts.
 */
describe('folder tree', () => {
  let t: TestApp;
  let db: Client;
  const tree = async (parent?: string) =>
    (
      await request(t.baseUrl)
        .get('/documents/folders')
        .query(parent === undefined ? {} : { parent })
        .expect(200)
    ).body as Tree;

  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
    await insertIds(db, [
      'top.md',
      'second-top.md',
      'a/x.md',
      'a/b/y.md',
      'a/b/c/z.md',
      'ab/q.md',
      // Named like the route: read with a letter encoded.
      'folders',
    ]);
    await insertIds(db, ['a/deleted.md', 'gone/only.md', 'a/b/gone/only.md', 'old-top.md'], true);
  });
  afterAll(() => t.close());

  it('lists the subfolders holding alive documents, with their subtrees counted, and the documents here', async () => {
    expect(await tree()).toEqual({
      parent: null,
      documents_here: 3,
      folders: [
        { folder: 'a', documents: 3 },
        { folder: 'ab', documents: 1 },
      ],
      truncated: false,
    });
    expect(await tree('')).toEqual(await tree());
    const a = { parent: 'a', documents_here: 1, folders: [{ folder: 'a/b', documents: 2 }] };
    expect(await tree('a')).toEqual({ ...a, truncated: false });
    expect(await tree('a/')).toEqual({ ...a, truncated: false });
    expect(await tree('a/b')).toEqual({
      parent: 'a/b',
      documents_here: 1,
      folders: [{ folder: 'a/b/c', documents: 1 }],
      truncated: false,
    });
    expect(await tree('a/b/c')).toEqual({
      parent: 'a/b/c',
      documents_here: 1,
      folders: [],
      truncated: false,
    });
    // A folder with nothing alive in it is an empty one, as is one that never existed.
    for (const empty of ['gone', 'nothing/here', 'a/x.md']) {
      expect(await tree(empty)).toEqual({
        parent: empty,
        documents_here: 0,
        folders: [],
        truncated: false,
      });
    }
    // The route is not the document of that name, which a letter encoded reaches.
    const named = await request(t.baseUrl).get('/documents/%66olders').expect(200);
    expect(named.body.document_id).toBe('folders');
  });

  it('counts folders whose names hold %, _, spaces, #, ? and non-ASCII as themselves', async () => {
    const ids = [
      'odd/50%/1.md',
      'odd/50%/2.md',
      'odd/50x/1.md',
      'odd/a_b/1.md',
      'odd/axb/1.md',
      'odd/axb/2.md',
      'odd/axb/3.md',
      'odd/with space/1.md',
      'odd/with space/deep er/2.md',
      'odd/hash#tag/1.md',
      'odd/q?/1.md',
      'odd/q?x/1.md',
      'odd/Grüße/1.md',
      'odd/Grüße/tief/2.md',
      'odd/Grüßen/1.md',
      'odd/文書/1.md',
      'odd/😀/1.md',
    ];
    // Through the API, as a console's documents would be written.
    await request(t.baseUrl)
      .post('/documents/bulk')
      .send({ items: ids.map((id) => ({ op: 'create', document_id: id, body: id })) })
      .expect(200);
    const expected: Record<string, number> = {
      'odd/50%': 2,
      'odd/50x': 1,
      'odd/a_b': 1,
      'odd/axb': 3,
      'odd/with space': 2,
      'odd/hash#tag': 1,
      'odd/q?': 1,
      'odd/q?x': 1,
      'odd/Grüße': 2,
      'odd/Grüßen': 1,
      'odd/文書': 1,
      'odd/😀': 1,
    };
    const odd = await tree('odd');
    expect(odd.folders).toEqual(
      byteOrder(Object.keys(expected)).map((folder) => ({ folder, documents: expected[folder] })),
    );
    for (const [folder, documents] of Object.entries(expected)) {
      const here = documents - (folder === 'odd/with space' || folder === 'odd/Grüße' ? 1 : 0);
      expect({ folder, here: (await tree(folder)).documents_here }).toEqual({ folder, here });
    }
    expect((await tree('odd/Grüße')).folders).toEqual([{ folder: 'odd/Grüße/tief', documents: 1 }]);
    expect((await tree('odd/with space')).folders).toEqual([
      { folder: 'odd/with space/deep er', documents: 1 },
    ]);
    // Raw in the URL, as a browser's form would send them.
    const raw = await request(t.baseUrl).get('/documents/folders?parent=odd%2F50%25').expect(200);
    expect(raw.body.documents_here).toBe(2);
  });

  it('lists 500 subfolders at most, and says when there are more', async () => {
    const folders = (count: number, parent: string) =>
      Array.from({ length: count }, (_, i) => `${parent}/f${String(i).padStart(3, '0')}/d.md`);
    await insertIds(db, [...folders(501, 'many'), ...folders(500, 'five-hundred')]);
    const many = await tree('many');
    expect(many.folders).toHaveLength(500);
    expect(many.truncated).toBe(true);
    expect(many.folders.at(-1)).toEqual({ folder: 'many/f499', documents: 1 });
    const exact = await tree('five-hundred');
    expect(exact.folders).toHaveLength(500);
    expect(exact.truncated).toBe(false);
  });

  describe('bad input: 400 INVALID_ARGUMENT naming the parameter', () => {
    it.each([
      ['an unknown parameter', 'prefix=a', 'prefix'],
      ['a parent given twice', 'parent=a&parent=b', 'parent'],
      ['a parent with an empty segment', 'parent=a//b', 'parent'],
      ['a parent starting with /', 'parent=/a', 'parent'],
      ['a parent with ..', 'parent=a/../b', 'parent'],
      ['a parent with a control character', 'parent=a%0Ab', 'parent'],
    ])('%s (%s)', async (_label, query, field) => {
      await expectInvalidParameter(t, `/documents/folders?${query}`, field);
    });
  });

  describe('counts kept by triggers', () => {
    /** Every folder's counts as the documents table says, and as the tree reads them. */
    async function expectExactCounts(): Promise<void> {
      const { rows: truth } = await db.query<{ folder: string; subtree: string; here: string }>(
        `SELECT f.folder, count(*) AS subtree, count(*) FILTER (WHERE f.here) AS here
           FROM kb_documents d, LATERAL kb_folders_of(d.document_id) AS f
          WHERE d.deleted_at IS NULL AND d.document_id LIKE 'kept/%'
          GROUP BY f.folder ORDER BY f.folder`,
      );
      const counts = t.app.get(FolderCountsRepository);
      const folders = ['kept', 'kept/a', 'kept/a/b', 'kept/c', 'kept/gone'];
      const read = await counts.counts(folders);
      for (const folder of folders) {
        const row = truth.find((r) => r.folder === folder);
        expect({ folder, ...read.get(folder) }).toEqual({
          folder,
          subtree: Number(row?.subtree ?? 0),
          here: Number(row?.here ?? 0),
        });
      }
    }
    const write = (method: 'post' | 'delete', path: string, body?: object) =>
      request(t.baseUrl)[method](path).send(body);

    it('stay exact through creates, bulk creates, deletes, restores, moves and hard deletes, folded or not', async () => {
      const counts = t.app.get(FolderCountsRepository);
      for (const id of ['kept/x.md', 'kept/a/1.md', 'kept/a/b/2.md', 'kept/a/b/3.md']) {
        await write('post', '/documents', { document_id: id, body: 'b' }).expect(201);
      }
      await expectExactCounts();
      await write('post', '/documents/bulk', {
        items: Array.from({ length: 40 }, (_, i) => ({
          op: 'create',
          document_id: `kept/c/${i}.md`,
          body: 'b',
        })),
      }).expect(200);
      await expectExactCounts();
      await counts.fold();
      await expectExactCounts();
      await write('delete', '/documents/kept/a/b/2.md').expect(200);
      await write('delete', '/documents/kept/c/3.md').expect(200);
      await expectExactCounts();
      await write('post', '/documents/kept/c/3.md/restore', {}).expect(200);
      await write('post', '/documents/kept/a/b/3.md/move', { to: 'kept/gone/3.md' }).expect(200);
      await write('post', '/documents/kept/gone/3.md/move', { to: 'kept/a/3.md' }).expect(200);
      await expectExactCounts();
      // A create over a deleted id brings it back (the same row).
      await write('post', '/documents', { document_id: 'kept/a/b/2.md', body: 'again' }).expect(
        201,
      );
      await db.query(`DELETE FROM kb_documents WHERE document_id LIKE 'kept/c/1%'`);
      await expectExactCounts();
      await counts.fold();
      await expectExactCounts();
      const tree = (
        await request(t.baseUrl).get('/documents/folders').query({ parent: 'kept' }).expect(200)
      ).body as Tree;
      expect(tree.documents_here).toBe(1);
      expect(tree.folders).toEqual([
        { folder: 'kept/a', documents: 3 },
        { folder: 'kept/c', documents: 29 },
      ]);
    });
  });

  describe('10 000 documents in one folder', () => {
    let repository: DocumentListingsRepository;
    const subfolders = Array.from({ length: 30 }, (_, i) => `big/sub${i}`);

    beforeAll(async () => {
      repository = t.app.get(DocumentListingsRepository);
      await db.query(
        `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
         SELECT 'big/doc-' || i || '.md', 'big', 'T', 'b', 'h' FROM generate_series(1, 10000) AS i
         UNION ALL
         SELECT 'big/sub' || (i % 30) || '/doc-' || i || '.md', 'big/sub' || (i % 30), 'T', 'b', 'h'
           FROM generate_series(1, 3000) AS i`,
      );
      await db.query('ANALYZE kb_documents');
    });

    it('answers every count', async () => {
      const big = await tree('big');
      expect(big.documents_here).toBe(10_000);
      expect(big.folders).toEqual(
        byteOrder(subfolders).map((folder) => ({ folder, documents: 100 })),
      );
      expect((await tree()).folders).toContainEqual({ folder: 'big', documents: 13_000 });
    });

    it.each([
      ['the root', ['', 'a', 'ab', 'big', 'five-hundred', 'many', 'odd']],
      ['the folder', ['big', ...subfolders]],
    ])(
      "counts under %s without reading a document, from each folder's count row",
      async (_label, folders) => {
        const counts = t.app.get(FolderCountsRepository);
        const [sql, params] = counts.countsQueryForExplain(folders);
        // As the background fold and autovacuum leave it: no deltas (the emptied table cut
        // to no page), statistics known.
        await counts.fold();
        await db.query('VACUUM ANALYZE kb_folder_counts, kb_folder_count_deltas');
        for (const nodes of [
          await genericPlan(db, sql, params),
          await analyzedPlan(db, sql, params),
        ]) {
          expect(nodes.map((node) => node['Relation Name']).filter(Boolean)).not.toContain(
            'kb_documents',
          );
          // The counts by their index; the deltas, emptied by the fold, may be read whole (a
          // table of no page costs nothing; whether PostgreSQL scans or probes it depends on
          // whether autovacuum has cut it yet).
          const scanned = nodes
            .filter((node) => node['Node Type'] === 'Seq Scan')
            .map((node) => node['Relation Name']);
          expect(scanned.filter((name) => name !== 'kb_folder_count_deltas')).toEqual([]);
        }
        // Its count row (looked up for each of the two numbers), whatever the folder holds
        // (big: 13 000 documents).
        expect(await rowsRead(db, sql, params)).toBeLessThanOrEqual(2 * folders.length);
      },
    );

    it('finds the subfolders with one index probe each, however many documents they hold', async () => {
      const [sql, params] = repository.foldersQueryForExplain('big/', 501);
      expect(await rowsRead(db, sql, params)).toBeLessThanOrEqual(subfolders.length + 1);
    });
  });
});
