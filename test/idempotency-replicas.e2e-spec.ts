import { getRandomPort } from 'get-port-please';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import request from 'supertest';
import { live, type ServerProcess, startServer } from './server-process-helpers';
import { startTestApp, type TestApp } from './support/app';
import { createTestDatabase, type TestDatabase } from './support/database';
import { waitFor } from './support/wait';

const KEY = 'idem-replicas-key-6f1d0a9c3e';
const API_KEYS = `importer:${KEY}:admin`;

/**
 * Two replicas on one database: replica A a server process that the test kills with SIGKILL,
 * replica B another. A bulk request's retry with the same key on B gets A's stored answer, or,
 * when A died mid-write, takes the key over once its lease has passed: one set of writes.
 */
describe('idempotency keys across replicas', () => {
  let db: TestDatabase;
  let sql: Client;
  let a: ServerProcess;
  let aUrl: string;
  let b: TestApp;

  const items = (prefix: string) => [
    ...Array.from({ length: 50 }, (_, i) => ({
      op: 'create',
      document_id: `${prefix}/n-${i}.md`,
      body: `note ${i}`,
    })),
    { op: 'update', document_id: `${prefix}/locked.md`, body: 'updated', expected_revision: 1 },
  ];
  const bulk = (baseUrl: string, key: string, prefix: string) =>
    request(baseUrl)
      .post('/documents/bulk')
      .set('X-API-Key', KEY)
      .set('Idempotency-Key', key)
      .send({ items: items(prefix) });
  const count = async (query: string, values: unknown[]) =>
    Number((await sql.query(query, values)).rows[0].count);

  beforeAll(async () => {
    db = await createTestDatabase();
    sql = await db.client();
    const port = await getRandomPort('127.0.0.1');
    aUrl = `http://127.0.0.1:${port}`;
    a = startServer({
      DATABASE_URL: db.url,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'silent',
      API_KEYS,
      MIGRATIONS_RUN: 'false',
      VECTOR_SYNC_ENABLED: 'false',
      MODELS_DIR: join(tmpdir(), 'agent-data-tests-no-models'),
    });
    b = await startTestApp({ API_KEYS }, db);
    await live(a, aUrl);
  }, 90_000);
  afterAll(async () => {
    if (a.child.exitCode === null) a.child.kill('SIGKILL');
    await b?.close();
    await db.drop();
  });

  it('answers a retry on replica B with what replica A answered', async () => {
    await request(b.baseUrl)
      .post('/documents')
      .set('X-API-Key', KEY)
      .send({ document_id: 'done/locked.md', body: 'v1' })
      .expect(201);
    const first = await bulk(aUrl, 'bulk-done', 'done').expect(200);
    expect(first.body).toMatchObject({ succeeded: 51, failed: 0 });
    const retry = await bulk(b.baseUrl, 'bulk-done', 'done').expect(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.text).toBe(first.text);
    expect(await count(`SELECT count(*) FROM kb_audit WHERE document_id LIKE 'done/%'`, [])).toBe(
      52,
    );
  });

  it('writes once when replica A is killed mid-request and B takes the key over', async () => {
    await request(b.baseUrl)
      .post('/documents')
      .set('X-API-Key', KEY)
      .send({ document_id: 'cut/locked.md', body: 'v1' })
      .expect(201);
    // Hold the row the bulk request updates last: A's request stops there, mid-transaction,
    // its 50 creates written but not committed.
    const lock = await db.client();
    await lock.query('BEGIN');
    await lock.query(`SELECT 1 FROM kb_documents WHERE document_id = 'cut/locked.md' FOR UPDATE`);
    const cut = bulk(aUrl, 'bulk-cut', 'cut').then(
      () => 'answered',
      () => 'cut',
    );
    const waiting = await waitFor(
      async () =>
        (
          await sql.query(
            `SELECT pid FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          )
        ).rows[0]?.pid as number | undefined,
      'replica A to wait on the locked row',
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    a.child.kill('SIGKILL');
    await a.exit;
    expect(await cut).toBe('cut');
    await lock.query('ROLLBACK');
    // A's connection ends without a COMMIT: PostgreSQL rolls its transaction back.
    await waitFor(
      async () =>
        (await sql.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [waiting])).rows
          .length === 0,
      "replica A's connection to close",
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    expect(
      await count(`SELECT count(*) FROM kb_documents WHERE document_id LIKE 'cut/n-%'`, []),
    ).toBe(0);

    // The claim A left is still within its lease: B says to wait.
    const busy = await bulk(b.baseUrl, 'bulk-cut', 'cut').expect(409);
    expect(busy.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(busy.headers['retry-after']).toBe('1');
    // Once the lease has passed (moved back here rather than waited for), B takes it over.
    await sql.query(
      `UPDATE kb_idempotency_keys SET claimed_at = claimed_at - interval '61 seconds'
        WHERE key = 'bulk-cut'`,
    );
    const takenOver = await bulk(b.baseUrl, 'bulk-cut', 'cut').expect(200);
    expect(takenOver.headers['idempotent-replayed']).toBeUndefined();
    expect(takenOver.body).toMatchObject({ succeeded: 51, failed: 0 });
    const replayed = await bulk(b.baseUrl, 'bulk-cut', 'cut').expect(200);
    expect(replayed.text).toBe(takenOver.text);

    // One set of writes: each document once, at revision 1, with one audit row; the update once.
    const { rows } = await sql.query(
      `SELECT d.document_id, d.revision, count(a.id) AS audits
         FROM kb_documents d JOIN kb_audit a USING (document_id)
        WHERE d.document_id LIKE 'cut/%'
        GROUP BY d.document_id, d.revision`,
    );
    expect(rows).toHaveLength(51);
    for (const row of rows) {
      const locked = row.document_id === 'cut/locked.md';
      expect({ id: row.document_id, revision: row.revision, audits: Number(row.audits) }).toEqual({
        id: row.document_id,
        revision: locked ? 2 : 1,
        audits: locked ? 2 : 1,
      });
    }
  });
});
