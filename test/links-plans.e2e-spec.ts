import type { Client } from 'pg';
import { LinksRepository } from '../src/documents/links.repository';
import { genericPlan, type PlanNode, withoutTriggers } from './support/explain';
import { startTestApp, TestApp } from './support/app';

/**
 * The plans of the reads of links (src/documents/links.repository.ts) over 300 000 documents,
 * 20 000 of them with links: each is an index range or a GIN lookup, never a scan of a table,
 * in the generic plan the named statements keep (PreparedStatements). At 30 000 documents a
 * generic plan that hashed every document's name for a lookup by name looked no dearer than
 * the index, and passed.
 */
describe('plans of the reads of links', () => {
  let t: TestApp;
  let db: Client;
  /** The SQL and parameters of each statement, as the repository sends them. */
  const sent: Array<{ name: string; text: string; values: unknown[] }> = [];

  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
    // The plans read kb_documents and kb_links only (kb_links is filled below, as the links'
    // reader would): the documents go in without the audit, queue and links bookkeeping.
    await withoutTriggers(
      db,
      ['kb_documents_audit_write', 'kb_documents_vector_sync_write', 'kb_documents_links_write'],
      async () => {
        await db.query(
          `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
           SELECT format('f%s/doc-%s.md', i % 100, i), format('f%s', i % 100), format('Title %s', i), 'b', 'h'
             FROM generate_series(1, 300000) AS i ORDER BY md5(i::text)`,
        );
      },
    );
    await db.query(
      `INSERT INTO kb_links (source_id, keys, labels)
       SELECT format('f%s/doc-%s.md', i % 100, i),
              ARRAY[format('=f%s/doc-%s.md', (i + 1) % 100, i + 1), format('~doc-%s', i + 2), '~common'],
              ARRAY['a', 'b', 'c']
         FROM generate_series(1, 20000) AS i`,
    );
    await db.query('VACUUM ANALYZE kb_documents, kb_links');
    // Each statement the repository sends, captured rather than run.
    const repository = t.app.get(LinksRepository);
    const statements = (repository as unknown as { statements: { query: unknown } }).statements;
    statements.query = async (name: string, text: string, values: unknown[]) => {
      sent.push({ name, text, values });
      return [{ count: '0' }];
    };
    await repository.alive(['f1/doc-1.md'], null);
    await repository.named([{ key: 'doc-1', lo: 'f1/', hi: 'f10' }], null);
    await repository.titled([{ key: 'title 1', lo: '', hi: null }], ['f1/%']);
    await repository.linkingPage(['~doc-5'], 'f5/doc-5.md', null, 21, null);
    await repository.candidatesOf('f1/doc-1.md', 'f1/doc-1', 'doc-1', null);
    await repository.anyLinking(['~doc-5'], 'f5/doc-5.md', ['f3/%']);
    await repository.candidates(
      { ids: ['f1/doc-1.md'], names: ['doc-2'], titles: ['title 3'] },
      null,
    );
    await repository.linkingWithKeys(['~doc-5'], 'f5/doc-5.md', null);
    await repository.linkingRows(['~doc-5'], 'f5/doc-5.md', ['f5/%']);
    await repository.heldKeys(['~doc-5', '=f1/doc-1.md']);
    await repository.namesakesIn({ ids: ['f1/doc-1.md'], names: ['doc-2'], titles: ['title 3'] }, [
      'f1',
      'f1/sub',
    ]);
    await repository.bodies(['f1/doc-1.md'], null);
    await repository.linkingUnder('f1/', 'f10', null, 200, null);
  }, 300_000);
  afterAll(() => t.close());

  const planOf = async (name: string): Promise<PlanNode[]> => {
    const statement = sent.find((s) => s.name === name);
    if (statement === undefined) throw new Error(`${name} was not sent`);
    return genericPlan(db, statement.text, statement.values);
  };
  const scans = (plan: PlanNode[]) =>
    plan
      .filter((node) => /Scan$/.test(node['Node Type']) && node['Relation Name'] !== undefined)
      .map((node) => `${node['Node Type']} ${node['Index Name'] ?? node['Relation Name']}`)
      .concat(
        plan
          .filter((node) => node['Node Type'] === 'Bitmap Index Scan')
          .map((node) => `Bitmap Index Scan ${node['Index Name']}`),
      );

  it.each([
    ['kb_links_alive', /Index (Only )?Scan kb_documents_(pkey|alive_id)/],
    ['kb_links_named', /Index (Only )?Scan kb_documents_alive_name/],
    ['kb_links_titled', /Index (Only )?Scan kb_documents_alive_title/],
    ['kb_links_linking_page', /Bitmap Index Scan kb_links_key_hashes/],
    ['kb_links_candidates_of', /Index (Only )?Scan kb_documents_alive_name/],
    ['kb_links_candidates_of', /Index (Only )?Scan kb_documents_alive_title/],
    ['kb_links_any_linking', /Bitmap Index Scan kb_links_key_hashes/],
    ['kb_links_candidates', /Index (Only )?Scan kb_documents_alive_name/],
    ['kb_links_candidates', /Index (Only )?Scan kb_documents_alive_title/],
    ['kb_links_linking_with_keys', /Bitmap Index Scan kb_links_key_hashes/],
    ['kb_links_linking_rows', /Bitmap Index Scan kb_links_key_hashes/],
    ['kb_links_held_keys', /Bitmap Index Scan kb_links_key_hashes/],
    ['kb_links_namesakes_in', /Bitmap Index Scan kb_documents_alive_name/],
    ['kb_links_namesakes_in', /Bitmap Index Scan kb_documents_alive_title/],
    ['kb_links_bodies', /Index (Only )?Scan kb_documents_(pkey|alive_id)/],
    ['kb_links_linking_under', /Index (Only )?Scan kb_links_pkey/],
  ])('%s reads through its index', async (name, index) => {
    const used = scans(await planOf(name));
    expect(used.some((scan) => index.test(scan))).toBe(true);
    expect(used.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
  });
});
