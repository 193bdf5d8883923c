import type { Client } from 'pg';
import request from 'supertest';
import { IdempotencyExpiryJob } from '../src/idempotency/idempotency-expiry.job';
import { auditOf, createDocument, tableCounts } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';
import { waitFor } from './support/wait';

const ALICE = 'idem-alice-key-3b8e1f0c7d';
const BOB = 'idem-bob-key-9a4c2e6b1f';
const API_KEYS = `alice:${ALICE}:admin;bob:${BOB}:admin`;
// Bob may read and write everything but alice/ (which he may not even read).
const ACCESS_POLICY = JSON.stringify({
  rules: [
    { who: ['key:alice'], read: '*', write: '*' },
    { who: ['key:bob'], read: ['shared/', 'bob/'], write: ['shared/', 'bob/'] },
  ],
});

/**
 * Retry-safe writes (docs/documents.md, "Retrying writes safely"): a write sent with an
 * `Idempotency-Key` runs once; its retries get its first answer, on any replica.
 */
describe('Idempotency-Key on REST writes', () => {
  let t: TestApp;
  let db: Client;
  let sequence = 0;
  const newKey = () => `key-${Date.now()}-${++sequence}`;
  const as = (apiKey: string, key?: string) => ({
    'X-API-Key': apiKey,
    ...(key === undefined ? {} : { 'Idempotency-Key': key }),
  });
  const keyRow = async (key: string) =>
    (await db.query(`SELECT * FROM kb_idempotency_keys WHERE key = $1`, [key])).rows;

  beforeAll(async () => {
    t = await startTestApp({ API_KEYS, ACCESS_POLICY });
    db = await t.db.client();
  });
  afterAll(() => t.close());

  it('answers a repeated bulk request from the first answer, writing nothing twice', async () => {
    await createDocument(t, { document_id: 'shared/bulk/old.md', body: 'old' }, as(ALICE));
    const key = newKey();
    const items = [
      { op: 'create', document_id: 'shared/bulk/a.md', body: 'A' },
      { op: 'create', document_id: 'shared/bulk/b.md', body: 'B' },
      { op: 'update', document_id: 'shared/bulk/old.md', body: 'new', expected_revision: 1 },
      { op: 'create', document_id: 'shared/bulk/old.md', body: 'taken' },
      { op: 'delete', document_id: 'shared/bulk/none.md' },
    ];
    const first = await request(t.baseUrl)
      .post('/documents/bulk')
      .set(as(ALICE, key))
      .send({ items })
      .expect(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.body).toMatchObject({ succeeded: 3, failed: 2 });
    const after = await tableCounts(db);

    const again = await request(t.baseUrl)
      .post('/documents/bulk')
      .set(as(ALICE, key))
      // The same body with its keys in another order is the same request.
      .send(
        JSON.stringify({
          items: items.map((item) => Object.fromEntries(Object.entries(item).reverse())),
        }),
      )
      .set('Content-Type', 'application/json')
      .expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await tableCounts(db)).toEqual(after);
    expect(await auditOf(db, 'shared/bulk/a.md')).toHaveLength(1);
    expect((await auditOf(db, 'shared/bulk/old.md')).map((a) => a.operation)).toEqual([
      'create',
      'update',
    ]);
    expect(await keyRow(key)).toEqual([
      expect.objectContaining({ principal: 'key alice', state: 'done' }),
    ]);
  });

  it('answers a conditional update whose answer was lost with its 200, not a conflict', async () => {
    const doc = await createDocument(t, { document_id: 'shared/cas.md', body: 'v1' }, as(ALICE));
    const key = newKey();
    const update = () =>
      request(t.baseUrl)
        .put('/documents/shared/cas.md')
        .set(as(ALICE, key))
        .set('If-Match', `"${doc.revision}"`)
        .send({ body: 'v2' });
    const first = await update().expect(200);
    // The client never saw `first`: it sends the same request again.
    const retry = await update().expect(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers.etag).toBe(first.headers.etag);
    expect(retry.body).toEqual(first.body);
    expect(retry.body).toMatchObject({ revision: 2, changed: true, body: 'v2' });
    // Without the key, the same retry is (rightly) a conflict: the write was not repeated.
    const bare = await request(t.baseUrl)
      .put('/documents/shared/cas.md')
      .set(as(ALICE))
      .set('If-Match', `"${doc.revision}"`)
      .send({ body: 'v2' })
      .expect(412);
    expect(bare.body.error.code).toBe('REVISION_CONFLICT');
    expect(await auditOf(db, 'shared/cas.md')).toHaveLength(2);
  });

  it('keeps Location and the status of a create, and a refusal as it was', async () => {
    const key = newKey();
    const create = () =>
      request(t.baseUrl)
        .post('/documents')
        .set(as(ALICE, key))
        .send({ document_id: 'shared/created.md', body: 'x' });
    const first = await create().expect(201);
    const retry = await create().expect(201);
    expect(retry.headers.location).toBe('/documents/shared/created.md');
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);

    // A refused write is stored too: its retry gets the same 400, even once the cause is gone.
    const badKey = newKey();
    const bad = () =>
      request(t.baseUrl)
        .post('/documents/shared/moved.md/move')
        .set(as(ALICE, badKey))
        .send({ to: 'shared/created.md' });
    const refused = await bad().expect(404);
    await createDocument(t, { document_id: 'shared/moved.md', body: 'm' }, as(ALICE));
    const replayed = await bad().expect(404);
    expect(replayed.body).toEqual(refused.body);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    await request(t.baseUrl).get('/documents/shared/moved.md').set(as(ALICE)).expect(200);
  });

  it('refuses a key reused for another request with 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const key = newKey();
    await request(t.baseUrl)
      .post('/documents')
      .set(as(ALICE, key))
      .send({ document_id: 'shared/reuse.md', body: 'one' })
      .expect(201);
    const before = await tableCounts(db);
    const reused = await request(t.baseUrl)
      .post('/documents')
      .set(as(ALICE, key))
      .send({ document_id: 'shared/reuse-2.md', body: 'two' })
      .expect(422);
    expect(reused.body.error).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      idempotency_key: key,
    });
    // Another route, or the same one with another condition, is another request too.
    await request(t.baseUrl)
      .put('/documents/shared/reuse.md')
      .set(as(ALICE, key))
      .send({ body: 'one' })
      .expect(422);
    expect(await tableCounts(db)).toEqual(before);
  });

  it('refuses a malformed key with 400 naming the rule', async () => {
    for (const bad of ['', 'x'.repeat(256), 'tab\there', 'é']) {
      const response = await request(t.baseUrl)
        .post('/documents')
        .set('X-API-Key', ALICE)
        .set('Idempotency-Key', bad)
        .send({ document_id: 'shared/never.md', body: 'x' });
      // Node refuses to send some of them at all; those it sends are refused.
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        code: 'INVALID_ARGUMENT',
        field: 'Idempotency-Key',
      });
      expect(response.body.error.message).toMatch(/1 to 255 printable ASCII/);
    }
    // The draft's quoted form names the same key as the bare one.
    const key = newKey();
    await request(t.baseUrl)
      .post('/documents')
      .set(as(ALICE))
      .set('Idempotency-Key', `"${key}"`)
      .send({ document_id: 'shared/quoted.md', body: 'q' })
      .expect(201);
    const bare = await request(t.baseUrl)
      .post('/documents')
      .set(as(ALICE, key))
      .send({ document_id: 'shared/quoted.md', body: 'q' })
      .expect(201);
    expect(bare.headers['idempotent-replayed']).toBe('true');
    await request(t.baseUrl).get('/documents/shared/never.md').set(as(ALICE)).expect(404);
  });

  it('answers 409 IDEMPOTENCY_KEY_IN_USE while the first request runs, then its answer', async () => {
    await createDocument(t, { document_id: 'shared/slow.md', body: 'v1' }, as(ALICE));
    const key = newKey();
    const update = () =>
      request(t.baseUrl).put('/documents/shared/slow.md').set(as(ALICE, key)).send({ body: 'v2' });
    // Hold the document's row: the first update waits inside its transaction.
    const lock = await t.db.client();
    await lock.query('BEGIN');
    await lock.query(`SELECT 1 FROM kb_documents WHERE document_id = 'shared/slow.md' FOR UPDATE`);
    const first = update().then((r) => r);
    await waitForState(db, key, 'running');
    const busy = await update().expect(409);
    expect(busy.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(busy.headers['retry-after']).toBe('1');
    await lock.query('ROLLBACK');
    expect((await first).status).toBe(200);
    const retry = await update().expect(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual((await first).body);
    expect(await auditOf(db, 'shared/slow.md')).toHaveLength(2);
  });

  it('writes once when many requests with one key race', async () => {
    await createDocument(t, { document_id: 'shared/race.md', body: 'r' }, as(ALICE));
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        request(t.baseUrl)
          .patch('/documents/shared/race.md')
          .set(as(ALICE, key))
          .send({ old_str: 'r', new_str: 'rr', replace_all: true }),
      ),
    );
    const written = answers.filter((a) => a.status === 200 && !a.headers['idempotent-replayed']);
    expect(written).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 200) expect(answer.body).toEqual(written[0].body);
      else expect(answer.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    }
    const document = await request(t.baseUrl).get('/documents/shared/race.md').set(as(ALICE));
    expect(document.body).toMatchObject({ body: 'rr', revision: 2 });
  });

  it('keeps the keys of two principals apart, and never replays one to the other', async () => {
    const key = newKey();
    const alice = await request(t.baseUrl)
      .post('/documents')
      .set(as(ALICE, key))
      .send({ document_id: 'shared/alice.md', body: 'by alice' })
      .expect(201);
    // Bob uses the same key for another request: his own, not a reuse of Alice's.
    const bob = await request(t.baseUrl)
      .post('/documents')
      .set(as(BOB, key))
      .send({ document_id: 'bob/mine.md', body: 'by bob' })
      .expect(201);
    expect(bob.headers['idempotent-replayed']).toBeUndefined();
    expect(bob.body.document_id).toBe('bob/mine.md');
    expect(alice.body.document_id).toBe('shared/alice.md');

    // Alice writes where Bob may not read; Bob's copy of her exact request, key and all,
    // is refused as a write of his own, and shows nothing of her answer.
    const secret = newKey();
    const aliceRequest = (apiKey: string) =>
      request(t.baseUrl)
        .post('/documents')
        .set(as(apiKey, secret))
        .send({ document_id: 'alice/secret.md', body: 'the secret' });
    await aliceRequest(ALICE).expect(201);
    const denied = await aliceRequest(BOB).expect(404);
    expect(denied.headers['idempotent-replayed']).toBeUndefined();
    expect(denied.text).not.toContain('the secret');
    expect((await keyRow(secret)).map((r) => r.principal).sort()).toEqual(['key alice', 'key bob']);
  });

  it('forgets a key a day old, and the expiry job deletes it', async () => {
    await createDocument(t, { document_id: 'shared/old-key.md', body: 'v1' }, as(ALICE));
    const key = newKey();
    const update = (body: string) =>
      request(t.baseUrl).put('/documents/shared/old-key.md').set(as(ALICE, key)).send({ body });
    await update('v2').expect(200);
    const recent = newKey();
    await request(t.baseUrl)
      .put('/documents/shared/old-key.md')
      .set(as(ALICE, recent))
      .send({ body: 'v3' })
      .expect(200);
    await db.query(
      `UPDATE kb_idempotency_keys SET created_at = created_at - interval '25 hours' WHERE key = $1`,
      [key],
    );
    // Forgotten: the same key with another body is a new request, not a reuse.
    const fresh = await update('v4').expect(200);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh.body.revision).toBe(4);

    await db.query(
      `UPDATE kb_idempotency_keys SET created_at = created_at - interval '25 hours' WHERE key = $1`,
      [key],
    );
    const deleted = await t.app.get(IdempotencyExpiryJob).run();
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect(await keyRow(key)).toEqual([]);
    expect(await keyRow(recent)).toHaveLength(1);
  });

  it('takes over a running claim of the same request once its lease has passed', async () => {
    await createDocument(t, { document_id: 'shared/stale.md', body: 'v1' }, as(ALICE));
    const key = newKey();
    const send = () =>
      request(t.baseUrl).put('/documents/shared/stale.md').set(as(ALICE, key)).send({ body: 'v2' });
    // A claim left `running` by a process that died before it wrote anything.
    await db.query(
      `INSERT INTO kb_idempotency_keys (principal, key, fingerprint, state, token)
       VALUES ('key alice', $1, 'f', 'running', gen_random_uuid())`,
      [key],
    );
    const fingerprint = async () => (await keyRow(key))[0].fingerprint;
    // A claim of another request: reuse, whatever its age.
    expect((await send().expect(422)).body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    await db.query(`DELETE FROM kb_idempotency_keys WHERE key = $1`, [key]);
    // The real fingerprint, then the same stale claim: in use until the lease passes.
    await send().expect(200);
    const real = await fingerprint();
    await db.query(
      `UPDATE kb_idempotency_keys SET state = 'running', answer = NULL, fingerprint = $2
        WHERE key = $1`,
      [key, real],
    );
    expect((await send().expect(409)).body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    await db.query(
      `UPDATE kb_idempotency_keys SET claimed_at = claimed_at - interval '61 seconds' WHERE key = $1`,
      [key],
    );
    const takenOver = await send().expect(200);
    expect(takenOver.headers['idempotent-replayed']).toBeUndefined();
    expect(takenOver.body).toMatchObject({ changed: false, revision: 2 });
    expect(await keyRow(key)).toEqual([expect.objectContaining({ state: 'done' })]);
  });
});

function waitForState(db: Client, key: string, state: string): Promise<unknown> {
  return waitFor(
    async () =>
      (await db.query(`SELECT state FROM kb_idempotency_keys WHERE key = $1`, [key])).rows[0]
        ?.state === state,
    `key ${key} to be ${state}`,
  );
}
