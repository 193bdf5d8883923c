import type { Client } from 'pg';
import request from 'supertest';
import { auditOf, createDocument, tableCounts } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';

/**
 * `POST /documents/bulk` (docs/documents.md): many creates, updates and deletes in one
 * request, each answered as its single write would be.
 */
describe('POST /documents/bulk', () => {
  let t: TestApp;
  let db: Client;
  const bulk = (items: object[]) => request(t.baseUrl).post('/documents/bulk').send({ items });

  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
  });
  afterAll(() => t.close());

  it('writes every item as its single write would, refusals and all, in order', async () => {
    await createDocument(t, { document_id: 'bulk/old.md', body: 'old' });
    await createDocument(t, { document_id: 'bulk/kept.md', body: 'kept' });
    const response = await bulk([
      { op: 'create', document_id: 'bulk/a.md', body: '# A', title: 'A', tags: ['x'] },
      { op: 'create', path: 'bulk/b.md', content: 'B' },
      { op: 'create', document_id: 'bulk/old.md', body: 'again' },
      { op: 'update', document_id: 'bulk/old.md', body: 'new', expected_revision: 1 },
      { op: 'update', document_id: 'bulk/kept.md', body: 'kept' },
      { op: 'update', document_id: 'bulk/kept.md', body: 'x', expected_revision: 9 },
      { op: 'update', document_id: 'bulk/none.md', body: 'x' },
      { op: 'create', document_id: 'bulk/../bad.md', body: 'x' },
      { op: 'create', document_id: 'bulk/nobody.md' },
      { op: 'delete', document_id: 'bulk/b.md' },
    ]).expect(200);
    expect(response.body.results.map((r: { status: number }) => r.status)).toEqual([
      201, 201, 409, 200, 200, 409, 404, 400, 400, 200,
    ]);
    expect(response.body).toMatchObject({ succeeded: 5, failed: 5 });
    expect(response.body.results[2].error).toMatchObject({ code: 'ALREADY_EXISTS' });
    expect(response.body.results[3]).toEqual({
      document_id: 'bulk/old.md',
      ok: true,
      status: 200,
      revision: 2,
      changed: true,
    });
    expect(response.body.results[4]).toMatchObject({ ok: true, revision: 1, changed: false });
    expect(response.body.results[5].error).toMatchObject({
      code: 'REVISION_CONFLICT',
      current_revision: 1,
    });
    expect(response.body.results[7].error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      field: 'document_id',
    });
    // Written, audited and snapshotted as single writes are.
    const a = await request(t.baseUrl).get('/documents/bulk/a.md').expect(200);
    expect(a.body).toMatchObject({ title: 'A', tags: ['x'], body: '# A', revision: 1 });
    await request(t.baseUrl).get('/documents/bulk/b.md').expect(404);
    expect(await auditOf(db, 'bulk/old.md')).toEqual([
      { operation: 'create', revision: 1, actor: 'local' },
      { operation: 'update', revision: 2, actor: 'local' },
    ]);
  });

  it('creates many in one statement: an alive id is taken, a deleted one comes back', async () => {
    await createDocument(t, { document_id: 'bulk/alive.md', body: 'alive' });
    await createDocument(t, { document_id: 'bulk/dead.md', body: 'dead' });
    await request(t.baseUrl).delete('/documents/bulk/dead.md').expect(200);
    const items = [
      { op: 'create', document_id: 'bulk/alive.md', body: 'x' },
      { op: 'create', document_id: 'bulk/dead.md', body: 'revived' },
      ...Array.from({ length: 50 }, (_, i) => ({
        op: 'create',
        document_id: `bulk/many/${i}.md`,
        body: `# ${i}`,
        tags: ['many', `n${i}`],
        metadata: { i },
      })),
    ];
    const response = await bulk(items).expect(200);
    expect(response.body.results.slice(0, 2)).toEqual([
      expect.objectContaining({
        status: 409,
        error: expect.objectContaining({ code: 'ALREADY_EXISTS' }),
      }),
      { document_id: 'bulk/dead.md', ok: true, status: 201, revision: 3 },
    ]);
    expect(response.body.succeeded).toBe(51);
    const one = await request(t.baseUrl).get('/documents/bulk/many/7.md').expect(200);
    expect(one.body).toMatchObject({ tags: ['many', 'n7'], metadata: { i: 7 }, revision: 1 });
    expect(await auditOf(db, 'bulk/dead.md')).toEqual([
      { operation: 'create', revision: 1, actor: 'local' },
      { operation: 'delete', revision: 2, actor: 'local' },
      { operation: 'restore', revision: 3, actor: 'local' },
    ]);
  });

  it('refuses a malformed request whole, writing nothing', async () => {
    const before = await tableCounts(db);
    for (const body of [
      {},
      { items: [] },
      { items: [{ op: 'rename', document_id: 'bulk/x.md' }] },
      { items: [{ op: 'create', body: 'no id' }] },
      { items: Array.from({ length: 501 }, (_, i) => ({ op: 'delete', document_id: `x/${i}` })) },
      { items: [{ op: 'create', document_id: 'bulk/y.md', body: 'y', colour: 'red' }] },
    ]) {
      const response = await request(t.baseUrl).post('/documents/bulk').send(body).expect(400);
      expect(response.body.error.code).toBe('INVALID_ARGUMENT');
    }
    expect(await tableCounts(db)).toEqual(before);
  });
});
