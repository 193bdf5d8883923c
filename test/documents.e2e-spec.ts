import type { Client } from 'pg';
import request from 'supertest';
import { auditOf, createDocument, idPath, snapshotsOf, tableCounts } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';

describe('documents REST API: create, read, update, patch', () => {
  let t: TestApp;
  let db: Client;
  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
  });
  afterAll(() => t.close());

  describe('POST /documents', () => {
    it('creates a document at revision 1 with its ETag and Location', async () => {
      const response = await request(t.baseUrl)
        .post('/documents')
        .send({
          document_id: 'knowledge/current-state/reports/phase-2.md',
          body: '# Phase 2 report\n\nAll green.',
          tags: ['report', 'phase-2', 'report'],
          metadata: { owner: 'ops', priority: 2 },
        })
        .expect(201);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers.etag).toBe('"1"');
      expect(response.headers.location).toBe(
        '/documents/knowledge/current-state/reports/phase-2.md',
      );
      expect(response.body).toMatchObject({
        document_id: 'knowledge/current-state/reports/phase-2.md',
        parent_id: 'knowledge/current-state/reports',
        title: 'Phase 2 report',
        tags: ['report', 'phase-2'],
        body: '# Phase 2 report\n\nAll green.',
        metadata: { owner: 'ops', priority: 2 },
        revision: 1,
        vector_status: 'pending',
        deleted_at: null,
      });
      expect(response.body.content_hash).toMatch(/^[0-9a-f]{64}$/);
    });

    it('accepts the path and content aliases and an explicit title', async () => {
      const response = await request(t.baseUrl)
        .post('/documents')
        .send({ path: 'top-level.md', content: 'no heading', title: '  Given title ' })
        .expect(201);
      expect(response.body).toMatchObject({
        document_id: 'top-level.md',
        parent_id: null,
        title: 'Given title',
        body: 'no heading',
      });
    });

    it('titles a document without heading by its last id segment', async () => {
      const document = await createDocument(t, {
        document_id: 'notes/untitled-note.md',
        body: 'plain',
      });
      expect(document.title).toBe('untitled-note.md');
    });

    it('refuses an id that is alive with ALREADY_EXISTS and changes nothing', async () => {
      const document = await createDocument(t);
      const before = await tableCounts(db);
      const response = await request(t.baseUrl)
        .post('/documents')
        .send({ document_id: document.document_id, body: 'other' })
        .expect(409);
      expect(response.body.error).toMatchObject({
        code: 'ALREADY_EXISTS',
        document_id: document.document_id,
      });
      expect(await tableCounts(db)).toEqual(before);
      await request(t.baseUrl)
        .get(idPath(document.document_id))
        .expect(200)
        .expect((r) => expect(r.body).toMatchObject({ body: document.body, revision: 1 }));
    });

    it('answers a body, title or tag holding a lone surrogate with the text it stores (U+FFFD)', async () => {
      const created = await request(t.baseUrl)
        .post('/documents')
        .set('Content-Type', 'application/json')
        .send(
          '{"document_id":"pg/cut-emoji.md","body":"cut \\ud83d here","title":"T \\ude00","tags":["x\\ud800"]}',
        )
        .expect(201);
      expect(created.body).toMatchObject({
        body: 'cut \uFFFD here',
        title: 'T \uFFFD',
        tags: ['x\uFFFD'],
      });
      const read = await request(t.baseUrl).get('/documents/pg/cut-emoji.md').expect(200);
      expect(read.body).toMatchObject({
        body: created.body.body,
        title: created.body.title,
        tags: created.body.tags,
        content_hash: created.body.content_hash,
      });
    });
  });

  describe('GET /documents/{id}', () => {
    it('reads ids with slashes as plain segments and with %2F', async () => {
      const document = await createDocument(t, { document_id: 'deep/a/b/c/d.md' });
      const plain = await request(t.baseUrl).get('/documents/deep/a/b/c/d.md').expect(200);
      const encoded = await request(t.baseUrl).get('/documents/deep%2Fa%2Fb/c%2Fd.md').expect(200);
      expect(plain.body.document_id).toBe(document.document_id);
      expect(encoded.body).toEqual(plain.body);
      expect(plain.headers.etag).toBe('"1"');
    });

    it('reads ids holding spaces, %, ?, #, unicode and route words', async () => {
      for (const id of [
        'odd/100% done?#1.md',
        'odd/ünïcödé 文書/😀.md',
        'odd/restore/move',
        'odd/a+b=c&d',
      ]) {
        await createDocument(t, { document_id: id, body: id });
        const response = await request(t.baseUrl).get(idPath(id)).expect(200);
        expect(response.body).toMatchObject({ document_id: id, body: id });
      }
    });

    it('reaches an id ending in /history with the last slash encoded', async () => {
      await createDocument(t, { document_id: 'reports/history', body: 'the document' });
      const document = await request(t.baseUrl).get('/documents/reports%2Fhistory').expect(200);
      expect(document.body.body).toBe('the document');
      // Unencoded, the route word wins: the history of "reports", which does not exist.
      const history = await request(t.baseUrl).get('/documents/reports/history').expect(404);
      expect(history.body.error).toMatchObject({ code: 'NOT_FOUND', document_id: 'reports' });
    });

    it('answers 404 NOT_FOUND as JSON for an unknown id', async () => {
      const response = await request(t.baseUrl).get('/documents/no/such/doc.md').expect(404);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.body).toEqual({
        error: {
          code: 'NOT_FOUND',
          message: 'document no/such/doc.md does not exist',
          document_id: 'no/such/doc.md',
        },
      });
    });

    it('answers 405 with Allow for a method a path lacks, and 404 for a path no route has', async () => {
      const trace = await request(t.baseUrl).trace('/documents').expect(405);
      expect(trace.headers.allow).toBe('GET, HEAD, POST');
      expect(trace.body.error).toEqual({
        code: 'METHOD_NOT_ALLOWED',
        message: 'TRACE is not allowed on /documents; allowed: GET, HEAD, POST',
      });
      const post = await request(t.baseUrl).post('/search').send({}).expect(405);
      expect(post.headers.allow).toBe('GET, HEAD');
      const nowhere = await request(t.baseUrl).trace('/no-such-route').expect(404);
      expect(nowhere.body.error.code).toBe('NOT_FOUND');
    });

    it('honours If-None-Match with 304 and the ETag', async () => {
      const document = await createDocument(t);
      const path = idPath(document.document_id);
      for (const tag of ['"1"', 'W/"1"', '"7", "1"', '*']) {
        const response = await request(t.baseUrl).get(path).set('If-None-Match', tag).expect(304);
        expect(response.headers.etag).toBe('"1"');
        expect(response.text).toBe('');
      }
      await request(t.baseUrl).get(path).set('If-None-Match', '"2"').expect(200);
    });
  });

  describe('PUT /documents/{id}', () => {
    it('updates content, bumps the revision and the ETag', async () => {
      const document = await createDocument(t, { body: 'one' });
      const response = await request(t.baseUrl)
        .put(idPath(document.document_id))
        .send({ body: 'two', title: 'New title', tags: ['x'], metadata: { k: 'v' } })
        .expect(200);
      expect(response.headers.etag).toBe('"2"');
      expect(response.body).toMatchObject({
        body: 'two',
        title: 'New title',
        tags: ['x'],
        metadata: { k: 'v' },
        revision: 2,
        changed: true,
      });
      const content = await request(t.baseUrl)
        .put(idPath(document.document_id))
        .send({ content: 'three' })
        .expect(200);
      expect(content.body).toMatchObject({ body: 'three', title: 'New title', revision: 3 });
    });

    it('treats an update that changes nothing as a no-op: same revision, no snapshot, no audit', async () => {
      const document = await createDocument(t, { body: 'same', tags: ['a'], metadata: { n: 1 } });
      const before = await tableCounts(db);
      const response = await request(t.baseUrl)
        .put(idPath(document.document_id))
        .send({ body: 'same', tags: ['a'], metadata: { n: 1 }, expected_revision: 1 })
        .expect(200);
      expect(response.body).toMatchObject({ revision: 1, changed: false });
      expect(response.headers.etag).toBe('"1"');
      expect(await tableCounts(db)).toEqual(before);
      expect(await snapshotsOf(db, document.document_id)).toEqual([]);
    });

    it('answers a stale expected_revision with 409 REVISION_CONFLICT and the current revision', async () => {
      const document = await createDocument(t);
      const path = idPath(document.document_id);
      await request(t.baseUrl).put(path).send({ body: 'v2' }).expect(200);
      const before = await tableCounts(db);
      const response = await request(t.baseUrl)
        .put(path)
        .send({ body: 'v3', expected_revision: 1 })
        .expect(409);
      expect(response.body.error).toMatchObject({
        code: 'REVISION_CONFLICT',
        current_revision: 2,
        expected_revision: 1,
      });
      expect(response.body.error.message).toMatch(/revision 2, not 1/);
      expect(await tableCounts(db)).toEqual(before);
    });

    it('honours If-Match: 412 when stale, 200 when current', async () => {
      const document = await createDocument(t);
      const path = idPath(document.document_id);
      const stale = await request(t.baseUrl)
        .put(path)
        .set('If-Match', '"5"')
        .send({ body: 'x' })
        .expect(412);
      expect(stale.body.error).toMatchObject({ code: 'REVISION_CONFLICT', current_revision: 1 });
      const current = await request(t.baseUrl)
        .put(path)
        .set('If-Match', '"1"')
        .send({ body: 'x' })
        .expect(200);
      expect(current.headers.etag).toBe('"2"');
      await request(t.baseUrl).put(path).set('If-Match', '*').send({ body: 'y' }).expect(200);
    });

    it('refuses an If-Match that is not one revision, or that disagrees with the body', async () => {
      const document = await createDocument(t);
      const path = idPath(document.document_id);
      const malformed = await request(t.baseUrl)
        .put(path)
        .set('If-Match', '"abc"')
        .send({ body: 'x' })
        .expect(400);
      expect(malformed.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'If-Match' });
      const disagree = await request(t.baseUrl)
        .put(path)
        .set('If-Match', '"1"')
        .send({ body: 'x', expected_revision: 2 })
        .expect(400);
      expect(disagree.body.error).toMatchObject({ field: 'expected_revision' });
    });

    it('answers 404 for an unknown id and 400 when there is nothing to update', async () => {
      await request(t.baseUrl).put('/documents/nope.md').send({ body: 'x' }).expect(404);
      const document = await createDocument(t);
      const empty = await request(t.baseUrl).put(idPath(document.document_id)).send({}).expect(400);
      expect(empty.body.error.message).toMatch(/nothing to update/);
    });
  });

  describe('PATCH /documents/{id}', () => {
    it('replaces exactly one occurrence', async () => {
      const document = await createDocument(t, { body: 'alpha beta gamma' });
      const response = await request(t.baseUrl)
        .patch(idPath(document.document_id))
        .send({ old_str: 'beta', new_str: 'BETA' })
        .expect(200);
      expect(response.body).toMatchObject({
        body: 'alpha BETA gamma',
        revision: 2,
        replacements: 1,
        changed: true,
      });
      expect(response.headers.etag).toBe('"2"');
    });

    it('answers 422 PATCH_NO_MATCH when old_str is absent, writing nothing', async () => {
      const document = await createDocument(t, { body: 'alpha' });
      const before = await tableCounts(db);
      const response = await request(t.baseUrl)
        .patch(idPath(document.document_id))
        .send({ old_str: 'omega', new_str: 'x' })
        .expect(422);
      expect(response.body.error).toMatchObject({ code: 'PATCH_NO_MATCH', revision: 1 });
      expect(await tableCounts(db)).toEqual(before);
    });

    it('answers 409 PATCH_AMBIGUOUS with the count, unless replace_all', async () => {
      const document = await createDocument(t, { body: 'x-x-x' });
      const path = idPath(document.document_id);
      const before = await tableCounts(db);
      const ambiguous = await request(t.baseUrl)
        .patch(path)
        .send({ old_str: 'x', new_str: 'y' })
        .expect(409);
      expect(ambiguous.body.error).toMatchObject({ code: 'PATCH_AMBIGUOUS', occurrences: 3 });
      expect(ambiguous.body.error.message).toMatch(/occurs 3 times/);
      expect(await tableCounts(db)).toEqual(before);
      const all = await request(t.baseUrl)
        .patch(path)
        .send({ old_str: 'x', new_str: 'yy', replace_all: true })
        .expect(200);
      expect(all.body).toMatchObject({ body: 'yy-yy-yy', replacements: 3, revision: 2 });
    });

    it('counts occurrences without overlap', async () => {
      const document = await createDocument(t, { body: 'aaaa' });
      const response = await request(t.baseUrl)
        .patch(idPath(document.document_id))
        .send({ old_str: 'aa', new_str: 'b' })
        .expect(409);
      expect(response.body.error.occurrences).toBe(2);
    });

    it('is conditional on expected_revision (409) and If-Match (412)', async () => {
      const document = await createDocument(t, { body: 'one two' });
      const path = idPath(document.document_id);
      const body = await request(t.baseUrl)
        .patch(path)
        .send({ old_str: 'one', new_str: '1', expected_revision: 3 })
        .expect(409);
      expect(body.body.error).toMatchObject({ code: 'REVISION_CONFLICT', current_revision: 1 });
      await request(t.baseUrl)
        .patch(path)
        .set('If-Match', '"3"')
        .send({ old_str: 'one', new_str: '1' })
        .expect(412);
      await request(t.baseUrl)
        .patch(path)
        .set('If-Match', '"1"')
        .send({ old_str: 'one', new_str: '1' })
        .expect(200);
    });

    it('writes nothing when new_str equals old_str', async () => {
      const document = await createDocument(t, { body: 'same' });
      const before = await tableCounts(db);
      const response = await request(t.baseUrl)
        .patch(idPath(document.document_id))
        .send({ old_str: 'same', new_str: 'same' })
        .expect(200);
      expect(response.body).toMatchObject({ revision: 1, changed: false });
      expect(await tableCounts(db)).toEqual(before);
    });

    it('answers 404 for an unknown id and 400 for an empty old_str', async () => {
      await request(t.baseUrl)
        .patch('/documents/nope.md')
        .send({ old_str: 'a', new_str: 'b' })
        .expect(404);
      const document = await createDocument(t);
      const response = await request(t.baseUrl)
        .patch(idPath(document.document_id))
        .send({ old_str: '', new_str: 'b' })
        .expect(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'old_str' });
    });
  });

  describe('Prefer: return=minimal (RFC 7240)', () => {
    const big = `# Big\n\n${'word '.repeat(200_000)}`; // 1 MB, not echoed back

    it('answers writes without the body and metadata, with Preference-Applied', async () => {
      const created = await request(t.baseUrl)
        .post('/documents')
        .set('Prefer', 'return=minimal')
        .send({ document_id: 'prefer/big.md', body: big, metadata: { a: 1 } })
        .expect(201);
      expect(created.headers['preference-applied']).toBe('return=minimal');
      expect(created.headers.etag).toBe('"1"');
      expect(created.headers.location).toBe('/documents/prefer/big.md');
      expect(created.body).toMatchObject({ document_id: 'prefer/big.md', revision: 1 });
      expect(created.body).not.toHaveProperty('body');
      expect(created.body).not.toHaveProperty('metadata');
      expect(Number(created.headers['content-length'])).toBeLessThan(1000);

      const updated = await request(t.baseUrl)
        .put('/documents/prefer/big.md')
        .set('Prefer', 'handling=lenient, return=minimal')
        .send({ body: `${big}!` })
        .expect(200);
      expect(updated.headers['preference-applied']).toBe('return=minimal');
      expect(updated.body).toMatchObject({ revision: 2, changed: true });
      expect(updated.body).not.toHaveProperty('body');

      const patched = await request(t.baseUrl)
        .patch('/documents/prefer/big.md')
        .set('Prefer', 'return=minimal')
        .send({ old_str: '# Big', new_str: '# Bigger' })
        .expect(200);
      expect(patched.body).toMatchObject({ revision: 3, changed: true, replacements: 1 });
      expect(patched.body).not.toHaveProperty('body');

      const restored = await request(t.baseUrl)
        .post('/documents/prefer/big.md/restore')
        .set('Prefer', 'return=minimal')
        .send({ revision: 1 })
        .expect(200);
      expect(restored.body).toMatchObject({ revision: 4, changed: true });
      expect(restored.body).not.toHaveProperty('body');

      // The write happened in full.
      const read = await request(t.baseUrl).get('/documents/prefer/big.md').expect(200);
      expect(read.body).toMatchObject({ body: big, metadata: { a: 1 }, revision: 4 });
    });

    it('echoes the document otherwise', async () => {
      for (const prefer of [undefined, 'return=representation', 'return=nothing']) {
        const call = request(t.baseUrl)
          .post('/documents')
          .send({ document_id: `prefer/echo-${prefer ?? 'none'}.md`, body: 'echo' });
        const response = await (prefer ? call.set('Prefer', prefer) : call).expect(201);
        expect(response.headers['preference-applied']).toBeUndefined();
        expect(response.body).toMatchObject({ body: 'echo', metadata: {} });
      }
    });
  });

  describe('routes', () => {
    it('answers unknown routes with 404 JSON, and a method a route lacks with 405 JSON', async () => {
      for (const [method, path] of [
        ['get', '/nope'],
        ['post', '/documents-x'],
      ] as const) {
        const response = await request(t.baseUrl)[method](path).expect(404);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        expect(response.body.error.code).toBe('NOT_FOUND');
      }
      for (const method of ['patch', 'delete'] as const) {
        const response = await request(t.baseUrl)[method]('/documents').expect(405);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        expect(response.headers.allow).toBe('GET, HEAD, POST');
        expect(response.body.error.code).toBe('METHOD_NOT_ALLOWED');
      }
    });

    it('echoes a sane X-Request-Id and makes one up otherwise', async () => {
      const given = await request(t.baseUrl).get('/documents').set('X-Request-Id', 'req-42.a:b');
      expect(given.headers['x-request-id']).toBe('req-42.a:b');
      const insane = await request(t.baseUrl).get('/documents').set('X-Request-Id', 'a b<script>');
      expect(insane.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const none = await request(t.baseUrl).get('/nope');
      expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('records the actor "local" when authentication is off', async () => {
      const document = await createDocument(t);
      expect(await auditOf(db, document.document_id)).toEqual([
        { operation: 'create', revision: 1, actor: 'local' },
      ]);
    });
  });
});
