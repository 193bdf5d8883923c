import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createTestDatabase, type TestDatabase } from './support/database';
import { startTestApp, TestApp } from './support/app';
import { sourceRunEnded } from './support/source-runs';
import { waitFor } from './support/wait';

/**
 * Two replicas on one database: a source is never run by both at once. Syncs asked of both,
 * again and again, make one run at a time (the second trigger finds the first), and the runs
 * recorded never overlap in time.
 */
const KEY = 'replicas-sources-key-0123456789abc';
const AS = { 'X-API-Key': KEY };

describe('sources on two replicas', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let dir: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), 'agent-data-sources-replicas-'));
    for (let i = 0; i < 200; i++) await writeFile(join(dir, `n${i}.md`), `# Note ${i}\n`);
    const env = { API_KEYS: `ops:${KEY}:admin`, DATA_DIR: dir };
    a = await startTestApp(env, db);
    b = await startTestApp(env, db);
    await request(a.baseUrl)
      .post('/sources')
      .set(AS)
      .send({ id: 'notes', kind: 'folder', path: dir, mount: 'notes' })
      .expect(201);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a source on one replica at a time, one run for triggers at once', async () => {
    for (let round = 0; round < 5; round++) {
      const [x, y] = await Promise.all([
        request(a.baseUrl).post('/sources/notes/sync').set(AS).expect(202),
        request(b.baseUrl).post('/sources/notes/sync').set(AS).expect(202),
      ]);
      expect(x.body.id).toBe(y.body.id);
      await sourceRunEnded(a.baseUrl, AS, 'notes', (r) => r.id === x.body.id, 'the run');
    }
    const client = await db.client();
    // The watch's runs too, once none is waiting or under way.
    const rows = await waitFor(
      async () => {
        const { rows } = await client.query(
          `SELECT id, runner, started_at, finished_at, status FROM kb_source_runs ORDER BY started_at`,
        );
        return rows.every((row) => !['queued', 'running'].includes(row.status)) && rows;
      },
      'every run to end',
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    expect(rows.length).toBeGreaterThanOrEqual(5);
    expect(rows.every((row) => row.status === 'succeeded')).toBe(true);
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i].started_at.getTime()).toBeGreaterThanOrEqual(
        rows[i - 1].finished_at.getTime(),
      );
    }
    const { rows: docs } = await client.query(
      `SELECT count(*)::int AS n FROM kb_documents WHERE document_id LIKE 'notes/%' AND deleted_at IS NULL`,
    );
    expect(docs[0].n).toBe(200);
  });
});
