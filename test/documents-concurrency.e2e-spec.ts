import type { Client } from 'pg';
import request from 'supertest';
import { auditOf, createDocument, idPath, snapshotsOf } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';

const WRITERS = 20;
const writers = Array.from({ length: WRITERS }, (_, i) => i);

/** A body holding one distinct token per writer: `<t00> <t01> ... <t19>`. */
const TOKENS_BODY = writers.map((i) => `<t${String(i).padStart(2, '0')}>`).join(' ');
const token = (i: number) => `<t${String(i).padStart(2, '0')}>`;

async function stored(db: Client, documentId: string): Promise<{ revision: number; body: string }> {
  const { rows } = await db.query(
    `SELECT revision, body FROM kb_documents WHERE document_id = $1`,
    [documentId],
  );
  return rows[0];
}

function statuses(responses: request.Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
  return counts;
}

describe('concurrent writers', () => {
  let t: TestApp;
  let db: Client;
  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
  });
  afterAll(() => t.close());

  it(`${WRITERS} updates with the same expected_revision: exactly one wins, nothing lost`, async () => {
    const { document_id: id } = await createDocument(t, { body: 'original' });
    const responses = await Promise.all(
      writers.map((i) =>
        request(t.baseUrl)
          .put(idPath(id))
          .send({ body: `writer ${i}`, expected_revision: 1 }),
      ),
    );
    expect(statuses(responses)).toEqual({ 200: 1, 409: WRITERS - 1 });
    const winner = responses.find((r) => r.status === 200)!;
    for (const loser of responses.filter((r) => r.status === 409)) {
      expect(loser.body.error).toMatchObject({
        code: 'REVISION_CONFLICT',
        current_revision: 2,
        expected_revision: 1,
      });
    }
    expect(await stored(db, id)).toEqual({ revision: 2, body: winner.body.body });
    expect(await auditOf(db, id)).toEqual([
      { operation: 'create', revision: 1, actor: 'local' },
      { operation: 'update', revision: 2, actor: 'local' },
    ]);
    expect((await snapshotsOf(db, id)).map((s) => [s.revision, s.body])).toEqual([[1, 'original']]);
  });

  it(`${WRITERS} updates with the same If-Match: one 200, the rest 412`, async () => {
    const { document_id: id } = await createDocument(t, { body: 'original' });
    const responses = await Promise.all(
      writers.map((i) =>
        request(t.baseUrl)
          .put(idPath(id))
          .set('If-Match', '"1"')
          .send({ body: `writer ${i}` }),
      ),
    );
    expect(statuses(responses)).toEqual({ 200: 1, 412: WRITERS - 1 });
    expect((await stored(db, id)).revision).toBe(2);
  });

  it(`${WRITERS} patches with the same expected_revision: exactly one wins, nothing lost`, async () => {
    const { document_id: id } = await createDocument(t, { body: TOKENS_BODY });
    const responses = await Promise.all(
      writers.map((i) =>
        request(t.baseUrl)
          .patch(idPath(id))
          .send({ old_str: token(i), new_str: `[done ${i}]`, expected_revision: 1 }),
      ),
    );
    expect(statuses(responses)).toEqual({ 200: 1, 409: WRITERS - 1 });
    for (const loser of responses.filter((r) => r.status === 409)) {
      expect(loser.body.error).toMatchObject({ code: 'REVISION_CONFLICT', current_revision: 2 });
    }
    const winner = responses.find((r) => r.status === 200)!;
    const current = await stored(db, id);
    expect(current).toEqual({ revision: 2, body: winner.body.body });
    expect(current.body.match(/\[done \d+\]/g)).toHaveLength(1);
    expect(current.body.match(/<t\d\d>/g)).toHaveLength(WRITERS - 1);
    expect(await auditOf(db, id)).toHaveLength(2);
    expect((await snapshotsOf(db, id)).map((s) => [s.revision, s.body])).toEqual([
      [1, TOKENS_BODY],
    ]);
  });

  it(`${WRITERS} patches without expected_revision on distinct text: every one lands`, async () => {
    const { document_id: id } = await createDocument(t, { body: TOKENS_BODY });
    const responses = await Promise.all(
      writers.map((i) =>
        request(t.baseUrl)
          .patch(idPath(id))
          .send({ old_str: token(i), new_str: `[done ${i}]` }),
      ),
    );
    expect(statuses(responses)).toEqual({ 200: WRITERS });
    expect(responses.map((r) => r.body.replacements)).toEqual(writers.map(() => 1));
    // Each patch wrote its own revision: 2..21, each exactly once.
    expect(responses.map((r) => r.body.revision).sort((a, b) => a - b)).toEqual(
      writers.map((i) => i + 2),
    );
    const current = await stored(db, id);
    expect(current.revision).toBe(WRITERS + 1);
    expect(current.body).toBe(writers.map((i) => `[done ${i}]`).join(' '));
    const audit = await auditOf(db, id);
    expect(audit.map((a) => a.revision)).toEqual([1, ...writers.map((i) => i + 2)]);
    expect((await snapshotsOf(db, id)).map((s) => s.revision)).toEqual(writers.map((i) => i + 1));
  });

  it(`${WRITERS} updates without expected_revision: all land in order, every version kept`, async () => {
    const { document_id: id } = await createDocument(t, { body: 'original' });
    const responses = await Promise.all(
      writers.map((i) =>
        request(t.baseUrl)
          .put(idPath(id))
          .send({ body: `writer ${i}` }),
      ),
    );
    expect(statuses(responses)).toEqual({ 200: WRITERS });
    const last = responses.reduce((a, b) => (a.body.revision > b.body.revision ? a : b));
    expect(await stored(db, id)).toEqual({ revision: WRITERS + 1, body: last.body.body });
    const snapshots = await snapshotsOf(db, id);
    expect(snapshots.map((s) => s.revision)).toEqual(writers.map((i) => i + 1));
    // Every writer's body was current at some revision: nothing vanished without a trace.
    const versions = new Set([...snapshots.map((s) => s.body), last.body.body]);
    for (const i of writers) expect(versions).toContain(`writer ${i}`);
  });

  it(`${WRITERS} creates of one id: one 201, the rest ALREADY_EXISTS`, async () => {
    const id = 'concurrent/create.md';
    const responses = await Promise.all(
      writers.map((i) =>
        request(t.baseUrl)
          .post('/documents')
          .send({ document_id: id, body: `writer ${i}` }),
      ),
    );
    expect(statuses(responses)).toEqual({ 201: 1, 409: WRITERS - 1 });
    for (const loser of responses.filter((r) => r.status === 409)) {
      expect(loser.body.error.code).toBe('ALREADY_EXISTS');
    }
    expect(await auditOf(db, id)).toEqual([{ operation: 'create', revision: 1, actor: 'local' }]);
  });
});
