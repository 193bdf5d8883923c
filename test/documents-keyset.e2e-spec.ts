import type { Client } from 'pg';
import { DocumentListingsRepository } from '../src/documents/document-listings.repository';
import { DocumentListingsService } from '../src/documents/document-listings.service';
import { Access } from '../src/documents/access';
import { genericPlan, rowsRead } from './support/explain';
import { startTestApp, TestApp } from './support/app';
import { insertIds } from './documents-helpers';

function byteOrder(values: string[]): string[] {
  return [...values].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

describe('keyset pages and completions over the id index', () => {
  let t: TestApp;
  let db: Client;
  let repository: DocumentListingsRepository;
  let documents: DocumentListingsService;
  const ids = [
    'docs/api.md',
    'docs/api/errors.md',
    'docs/api/v1/old.md',
    'docs/api-v2/intro.md',
    'docs/api.v3/intro.md',
    'docs/apis/list.md',
    'docs/guide/setup.md',
    'docs/guide/setup/linux.md',
    'docs/readme.md',
    'notes/2024/a.md',
    'notes/2025/b.md',
    'top.md',
    'zz/Grüße/ü.md',
  ];

  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
    repository = t.app.get(DocumentListingsRepository);
    documents = t.app.get(DocumentListingsService);
    await insertIds(db, ids);
    await insertIds(db, ['docs/deleted/gone.md', 'gone/x.md'], true);
  });
  afterAll(() => t.close());

  describe('pages after an id', () => {
    it('walks every alive document once, in byte order, with sizes and revisions', async () => {
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await documents.pageAfter(after, 4, Access.EVERYTHING);
        seen.push(...page.items.map((item) => item.document_id));
        expect(page.items[0]).toMatchObject({ revision: 1, size: expect.any(Number) });
        if (!page.more) break;
        after = page.items.at(-1)!.document_id;
      }
      expect(seen).toEqual(byteOrder(ids));
      const first = await documents.pageAfter(undefined, 1, Access.EVERYTHING);
      expect(first.items[0]).toEqual({
        document_id: 'docs/api-v2/intro.md',
        title: 'T docs/api-v2/intro.md',
        revision: 1,
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        size: Buffer.byteLength('body of docs/api-v2/intro.md'),
      });
    });
  });

  describe('id completions', () => {
    it.each([
      [
        'docs/api',
        [
          'docs/api-v2/intro.md',
          'docs/api.md',
          'docs/api.v3/intro.md',
          'docs/api/errors.md',
          'docs/api/v1/old.md',
          'docs/apis/list.md',
        ],
      ],
      ['docs/g', ['docs/guide/setup.md', 'docs/guide/setup/linux.md']],
      ['zz/Grü', ['zz/Grüße/ü.md']],
      ['docs/deleted', []],
      ['nope', []],
    ])('%p → %p', async (prefix, expected) => {
      expect(await documents.completeIds(prefix, 100, Access.EVERYTHING)).toEqual({
        values: expected,
        more: false,
      });
    });

    it('stops at the limit and says more exist', async () => {
      expect(await documents.completeIds('docs/', 3, Access.EVERYTHING)).toEqual({
        values: ['docs/api-v2/intro.md', 'docs/api.md', 'docs/api.v3/intro.md'],
        more: true,
      });
    });

    it('refuses a value with control characters, naming the argument', async () => {
      await expect(documents.completeIds('a\u0000', 10, Access.EVERYTHING)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/^value: /),
      });
    });
  });

  describe('folder completions', () => {
    it.each([
      ['', ['docs', 'notes', 'zz']],
      ['docs/', ['docs/api-v2', 'docs/api.v3', 'docs/api', 'docs/apis', 'docs/guide']],
      ['docs/api', ['docs/api-v2', 'docs/api.v3', 'docs/api', 'docs/apis']],
      ['docs/api/', ['docs/api/v1']],
      ['docs/guide', ['docs/guide']],
      ['docs/guide/', ['docs/guide/setup']],
      ['no', ['notes']],
      ['notes/', ['notes/2024', 'notes/2025']],
      ['zz/G', ['zz/Grüße']],
      ['docs/deleted', []],
      ['top', []],
    ])('%p → %p (each folder once, whatever it holds)', async (prefix, expected) => {
      expect(await documents.completeFolders(prefix, 100, Access.EVERYTHING)).toEqual({
        values: expected,
        more: false,
      });
    });

    it('stops at the limit and says more exist', async () => {
      expect(await documents.completeFolders('docs/', 2, Access.EVERYTHING)).toEqual({
        values: ['docs/api-v2', 'docs/api.v3'],
        more: true,
      });
    });
  });

  describe('over 12 000 documents', () => {
    beforeAll(async () => {
      await db.query(
        `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
         SELECT 'bulk/' || (i % 40) || '/doc-' || i || '.md', 'bulk/' || (i % 40), 'T', 'b', 'h'
           FROM generate_series(1, 12000) AS i`,
      );
      await db.query('ANALYZE kb_documents');
    });

    it.each([
      ['the first page', () => repository.pageQueryForExplain(null, '', 101)],
      ['a page after an id', () => repository.pageQueryForExplain('bulk/20/doc-5.md', '', 101)],
      ['id completions', () => repository.idsQueryForExplain('bulk/3', 101)],
      ['id completions without a prefix', () => repository.idsQueryForExplain('', 101)],
      ['folder completions', () => repository.foldersQueryForExplain('bulk/', 101)],
      ['folder completions without a prefix', () => repository.foldersQueryForExplain('', 101)],
    ])('%s: the generic plan scans an index, never the table', async (_label, query) => {
      const [sql, params] = query();
      const types = (await genericPlan(db, sql, params)).map((node) => node['Node Type']);
      expect(types).not.toContain('Seq Scan');
      expect(types.some((type) => /Index/.test(type))).toBe(true);
    });

    it('a page reads no more rows than it returns plus one', async () => {
      const [sql, params] = repository.pageQueryForExplain('bulk/20/doc-5.md', '', 101);
      expect(await rowsRead(db, sql, params)).toBeLessThanOrEqual(101);
    });

    it('id completions read no more rows than they return plus one', async () => {
      const [sql, params] = repository.idsQueryForExplain('bulk/', 101);
      expect(await rowsRead(db, sql, params)).toBeLessThanOrEqual(101);
    });

    it('folder completions read one index entry per folder, not the documents under them', async () => {
      const [sql, params] = repository.foldersQueryForExplain('bulk/', 101);
      const result = await documents.completeFolders('bulk/', 100, Access.EVERYTHING);
      expect(result.values).toHaveLength(40);
      expect(result.values).toEqual(
        byteOrder(result.values.map((v) => `${v}/`)).map((v) => v.slice(0, -1)),
      );
      // 40 folders of 300 documents each: the walk reads 40 keys (+1 probe past the end).
      expect(await rowsRead(db, sql, params)).toBeLessThanOrEqual(41);
    });
  });
});
