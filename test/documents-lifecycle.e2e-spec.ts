import type { Client } from 'pg';
import request from 'supertest';
import { auditOf, createDocument, idPath, snapshotsOf, tableCounts } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';

describe('documents REST API: delete, revive, restore, history, move', () => {
  let t: TestApp;
  let db: Client;
  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
  });
  afterAll(() => t.close());

  describe('DELETE /documents/{id}', () => {
    it('soft-deletes: gone from get and list, kept in the table', async () => {
      const document = await createDocument(t, { document_id: 'del/a.md' });
      const response = await request(t.baseUrl).delete('/documents/del/a.md').expect(200);
      expect(response.body).toEqual({
        document_id: 'del/a.md',
        revision: 2,
        deleted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      await request(t.baseUrl).get(idPath(document.document_id)).expect(404);
      const list = await request(t.baseUrl).get('/documents?prefix=del/').expect(200);
      expect(list.body.items).toEqual([]);
      const { rows } = await db.query(
        `SELECT deleted_at IS NOT NULL AS deleted, body FROM kb_documents WHERE document_id = $1`,
        ['del/a.md'],
      );
      expect(rows).toEqual([{ deleted: true, body: document.body }]);
    });

    it('answers 404 for an unknown or already deleted id', async () => {
      await request(t.baseUrl).delete('/documents/del/never.md').expect(404);
      await createDocument(t, { document_id: 'del/twice.md' });
      await request(t.baseUrl).delete('/documents/del/twice.md').expect(200);
      const before = await tableCounts(db);
      await request(t.baseUrl).delete('/documents/del/twice.md').expect(404);
      expect(await tableCounts(db)).toEqual(before);
    });

    it('is conditional on If-Match (412 when stale)', async () => {
      await createDocument(t, { document_id: 'del/cond.md' });
      const stale = await request(t.baseUrl)
        .delete('/documents/del/cond.md')
        .set('If-Match', '"9"')
        .expect(412);
      expect(stale.body.error).toMatchObject({ code: 'REVISION_CONFLICT', current_revision: 1 });
      await request(t.baseUrl).get('/documents/del/cond.md').expect(200);
      await request(t.baseUrl).delete('/documents/del/cond.md').set('If-Match', '"1"').expect(200);
    });

    it('makes update and patch of a deleted document answer 404', async () => {
      await createDocument(t, { document_id: 'del/gone.md', body: 'text' });
      await request(t.baseUrl).delete('/documents/del/gone.md').expect(200);
      await request(t.baseUrl).put('/documents/del/gone.md').send({ body: 'x' }).expect(404);
      await request(t.baseUrl)
        .patch('/documents/del/gone.md')
        .send({ old_str: 'text', new_str: 'x' })
        .expect(404);
    });
  });

  describe('create after soft delete', () => {
    it('revives the document with the new content and a continuing revision', async () => {
      const id = 'revive/doc.md';
      await createDocument(t, { document_id: id, body: 'first life', tags: ['old'] });
      await request(t.baseUrl).delete(idPath(id)).expect(200);
      const revived = await request(t.baseUrl)
        .post('/documents')
        .send({ document_id: id, body: '# Second life', tags: ['new'] })
        .expect(201);
      expect(revived.headers.etag).toBe('"3"');
      expect(revived.body).toMatchObject({
        document_id: id,
        body: '# Second life',
        title: 'Second life',
        tags: ['new'],
        revision: 3,
        deleted_at: null,
        vector_status: 'pending',
      });
      expect(await auditOf(db, id)).toEqual([
        { operation: 'create', revision: 1, actor: 'local' },
        { operation: 'delete', revision: 2, actor: 'local' },
        { operation: 'restore', revision: 3, actor: 'local' },
      ]);
      expect((await snapshotsOf(db, id)).map((s) => [s.revision, s.body])).toEqual([
        [1, 'first life'],
        [2, 'first life'],
      ]);
    });
  });

  describe('POST /documents/{id}/restore', () => {
    it('undeletes a soft-deleted document as it was', async () => {
      const id = 'restore/undelete.md';
      await createDocument(t, { document_id: id, body: 'keep me', metadata: { a: 1 } });
      await request(t.baseUrl).delete(idPath(id)).expect(200);
      const restored = await request(t.baseUrl)
        .post(`${idPath(id)}/restore`)
        .expect(200);
      expect(restored.headers.etag).toBe('"3"');
      expect(restored.body).toMatchObject({
        document_id: id,
        body: 'keep me',
        metadata: { a: 1 },
        revision: 3,
        deleted_at: null,
        changed: true,
      });
      await request(t.baseUrl).get(idPath(id)).expect(200);
      // The history says which statement replaced each version: the delete, then the restore
      // (an update that brings the deleted version back).
      const history = await request(t.baseUrl)
        .get(`${idPath(id)}/history`)
        .expect(200);
      expect(
        history.body.items.map((i: { revision: number; reason: string }) => [i.revision, i.reason]),
      ).toEqual([
        [2, 'update'],
        [1, 'delete'],
      ]);
    });

    it('returns an alive document unchanged, and 404 for an unknown one', async () => {
      const id = 'restore/alive.md';
      await createDocument(t, { document_id: id });
      const before = await tableCounts(db);
      const response = await request(t.baseUrl)
        .post(`${idPath(id)}/restore`)
        .send({})
        .expect(200);
      expect(response.body).toMatchObject({ revision: 1, changed: false });
      expect(await tableCounts(db)).toEqual(before);
      await request(t.baseUrl).post('/documents/restore/never.md/restore').expect(404);
    });

    it('makes an earlier revision the current content, as a new revision', async () => {
      const id = 'restore/to-revision.md';
      await createDocument(t, { document_id: id, body: 'v1', title: 'T1' });
      await request(t.baseUrl).put(idPath(id)).send({ body: 'v2', title: 'T2' }).expect(200);
      await request(t.baseUrl).put(idPath(id)).send({ body: 'v3' }).expect(200);
      const restored = await request(t.baseUrl)
        .post(`${idPath(id)}/restore`)
        .send({ revision: 1 })
        .expect(200);
      expect(restored.body).toMatchObject({ body: 'v1', title: 'T1', revision: 4, changed: true });
      const current = await request(t.baseUrl).get(idPath(id)).expect(200);
      expect(current.body).toMatchObject({ body: 'v1', revision: 4 });
      // Audited as what it was, and the next write as what it is.
      await request(t.baseUrl).put(idPath(id)).send({ body: 'v5' }).expect(200);
      expect(await auditOf(db, id)).toEqual([
        { operation: 'create', revision: 1, actor: 'local' },
        { operation: 'update', revision: 2, actor: 'local' },
        { operation: 'update', revision: 3, actor: 'local' },
        { operation: 'restore', revision: 4, actor: 'local' },
        { operation: 'update', revision: 5, actor: 'local' },
      ]);
    });

    it('writes nothing when the earlier revision holds the current content', async () => {
      const id = 'restore/same-content.md';
      await createDocument(t, { document_id: id, body: 'v1' });
      await request(t.baseUrl).put(idPath(id)).send({ body: 'v2' }).expect(200);
      await request(t.baseUrl).put(idPath(id)).send({ body: 'v1' }).expect(200);
      const before = await tableCounts(db);
      const response = await request(t.baseUrl)
        .post(`${idPath(id)}/restore`)
        .send({ revision: 1 })
        .expect(200);
      expect(response.body).toMatchObject({ body: 'v1', revision: 3, changed: false });
      expect(response.headers.etag).toBe('"3"');
      expect(await tableCounts(db)).toEqual(before);
    });

    it('brings a deleted document back at an earlier revision', async () => {
      const id = 'restore/deleted-to-revision.md';
      await createDocument(t, { document_id: id, body: 'v1' });
      await request(t.baseUrl).put(idPath(id)).send({ body: 'v2' }).expect(200);
      await request(t.baseUrl).delete(idPath(id)).expect(200);
      const restored = await request(t.baseUrl)
        .post(`${idPath(id)}/restore`)
        .send({ revision: 1 })
        .expect(200);
      expect(restored.body).toMatchObject({ body: 'v1', revision: 4, deleted_at: null });
    });

    it('answers 404 for a revision never saved and 400 for a bad one, writing nothing', async () => {
      const id = 'restore/bad-revision.md';
      await createDocument(t, { document_id: id });
      const before = await tableCounts(db);
      const missing = await request(t.baseUrl)
        .post(`${idPath(id)}/restore`)
        .send({ revision: 99 })
        .expect(404);
      expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', revision: 99 });
      for (const revision of [0, -1, 1.5, '1', 1e12]) {
        const bad = await request(t.baseUrl)
          .post(`${idPath(id)}/restore`)
          .send({ revision })
          .expect(400);
        expect(bad.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'revision' });
      }
      const unknown = await request(t.baseUrl)
        .post(`${idPath(id)}/restore`)
        .send({ revision: 1, force: true })
        .expect(400);
      expect(unknown.body.error.field).toBe('force');
      expect(await tableCounts(db)).toEqual(before);
    });
  });

  describe('GET /documents/{id}/history', () => {
    it('lists earlier versions newest first, with actor and reason, without bodies', async () => {
      const id = 'history/doc.md';
      await createDocument(t, { document_id: id, body: 'v1' });
      await request(t.baseUrl).put(idPath(id)).send({ body: 'version 2' }).expect(200);
      await request(t.baseUrl).put(idPath(id)).send({ body: 'v3' }).expect(200);
      await request(t.baseUrl).delete(idPath(id)).expect(200);
      const response = await request(t.baseUrl)
        .get(`${idPath(id)}/history`)
        .expect(200);
      expect(response.body).toMatchObject({
        document_id: id,
        current_revision: 4,
        deleted: true,
        next_offset: null,
      });
      expect(
        response.body.items.map((item: Record<string, unknown>) => [
          item.revision,
          item.body_bytes,
          item.actor,
          item.reason,
        ]),
      ).toEqual([
        [3, 2, 'local', 'delete'],
        [2, 9, 'local', 'update'],
        [1, 2, 'local', 'update'],
      ]);
      expect(response.body.items[0]).not.toHaveProperty('body');
    });

    it('pages with limit and offset', async () => {
      const id = 'history/paged.md';
      await createDocument(t, { document_id: id, body: 'v1' });
      for (let v = 2; v <= 5; v++) {
        await request(t.baseUrl)
          .put(idPath(id))
          .send({ body: `v${v}` })
          .expect(200);
      }
      const first = await request(t.baseUrl)
        .get(`${idPath(id)}/history?limit=3`)
        .expect(200);
      expect(first.body.items.map((i: { revision: number }) => i.revision)).toEqual([4, 3, 2]);
      expect(first.body.next_offset).toBe(3);
      const second = await request(t.baseUrl)
        .get(`${idPath(id)}/history?limit=3&offset=3`)
        .expect(200);
      expect(second.body.items.map((i: { revision: number }) => i.revision)).toEqual([1]);
      expect(second.body.next_offset).toBeNull();
    });

    it('reads one earlier version whole with ?revision', async () => {
      const id = 'history/whole.md';
      await createDocument(t, { document_id: id, body: '# One\n\nfirst words', tags: ['a'] });
      await request(t.baseUrl)
        .put(idPath(id))
        .send({ body: '# Two', metadata: { k: 1 } })
        .expect(200);
      const first = await request(t.baseUrl)
        .get(`${idPath(id)}/history?revision=1`)
        .expect(200);
      expect(first.body).toMatchObject({
        document_id: id,
        revision: 1,
        body: '# One\n\nfirst words',
        tags: ['a'],
        metadata: {},
        reason: 'update',
        actor: 'local',
      });
      // The current revision is the document itself, not a snapshot.
      const missing = await request(t.baseUrl)
        .get(`${idPath(id)}/history?revision=2`)
        .expect(404);
      expect(missing.body.error.message).toBe(`document ${id} has no saved revision 2`);
      for (const query of ['revision=0', 'revision=x', 'revision=1&limit=2']) {
        const bad = await request(t.baseUrl)
          .get(`${idPath(id)}/history?${query}`)
          .expect(400);
        expect(bad.body.error.code).toBe('INVALID_ARGUMENT');
      }
    });

    it('answers 404 for an unknown id and 400 for bad paging', async () => {
      await request(t.baseUrl).get('/documents/history/never.md/history').expect(404);
      await createDocument(t, { document_id: 'history/any.md' });
      for (const query of ['limit=0', 'limit=101', 'offset=-1', 'limit=x', 'colour=red']) {
        const response = await request(t.baseUrl)
          .get(`/documents/history/any.md/history?${query}`)
          .expect(400);
        expect(response.body.error.code).toBe('INVALID_ARGUMENT');
      }
    });
  });

  describe('POST /documents/{id}/move', () => {
    it('gives the document a new id, keeping its revision, earlier versions and audit trail', async () => {
      await createDocument(t, { document_id: 'move/from.md', body: 'first' });
      await request(t.baseUrl).put('/documents/move/from.md').send({ body: 'second' }).expect(200);
      const moved = await request(t.baseUrl)
        .post('/documents/move/from.md/move')
        .send({ to: 'moved/deep/to.md', expected_revision: 2 })
        .expect(200);
      expect(moved.headers.location).toBe('/documents/moved/deep/to.md');
      expect(moved.body).toMatchObject({
        document_id: 'moved/deep/to.md',
        parent_id: 'moved/deep',
        revision: 2,
        body: 'second',
        vector_status: 'pending',
      });
      await request(t.baseUrl).get('/documents/move/from.md').expect(404);
      const history = await request(t.baseUrl)
        .get('/documents/moved/deep/to.md/history')
        .expect(200);
      expect(history.body.items.map((i: { revision: number }) => i.revision)).toEqual([1]);
      expect(await auditOf(db, 'moved/deep/to.md')).toEqual([
        { operation: 'create', revision: 1, actor: 'local' },
        { operation: 'update', revision: 2, actor: 'local' },
        { operation: 'move', revision: 2, actor: 'local' },
      ]);
      expect(await auditOf(db, 'move/from.md')).toEqual([
        { operation: 'moved-away', revision: 2, actor: 'local' },
      ]);
      // Listed under its new folder only; the old id is free again.
      const listed = await request(t.baseUrl).get('/documents?prefix=moved/').expect(200);
      expect(listed.body.items.map((d: { document_id: string }) => d.document_id)).toEqual([
        'moved/deep/to.md',
      ]);
      await createDocument(t, { document_id: 'move/from.md', body: 'new at the old id' });
    });

    it('refuses a taken id, a stale revision, a missing source and a bad target, changing nothing', async () => {
      await createDocument(t, { document_id: 'move/a.md' });
      await createDocument(t, { document_id: 'move/b.md' });
      await createDocument(t, { document_id: 'move/gone.md' });
      await request(t.baseUrl).delete('/documents/move/gone.md').expect(200);
      const before = await tableCounts(db);
      const refusals: Array<[object, number, string, Record<string, string>?]> = [
        [{ to: 'move/b.md' }, 409, 'ALREADY_EXISTS'],
        [{ to: 'move/gone.md' }, 409, 'ALREADY_EXISTS'],
        [{ to: 'move/c.md', expected_revision: 7 }, 409, 'REVISION_CONFLICT'],
        [{ to: 'move/c.md' }, 412, 'REVISION_CONFLICT', { 'If-Match': '"7"' }],
        [{ to: 'move/a.md' }, 400, 'INVALID_ARGUMENT'],
        [{ to: '../escape.md' }, 400, 'INVALID_ARGUMENT'],
        [{}, 400, 'INVALID_ARGUMENT'],
        [{ to: 'move/c.md', colour: 'red' }, 400, 'INVALID_ARGUMENT'],
      ];
      for (const [body, status, code, headers] of refusals) {
        const response = await request(t.baseUrl)
          .post('/documents/move/a.md/move')
          .set(headers ?? {})
          .send(body)
          .expect(status);
        expect([body, response.body.error.code]).toEqual([body, code]);
      }
      await request(t.baseUrl)
        .post('/documents/move/none.md/move')
        .send({ to: 'move/c.md' })
        .expect(404);
      expect(await tableCounts(db)).toEqual(before);
    });
  });
});
