import request from 'supertest';
import { startTestApp, TestApp } from './support/app';

describe('health and metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('reports live and ready with PostgreSQL reachable and migrations applied', async () => {
    await request(t.baseUrl).get('/health/live').expect(200, { status: 'ok' });
    const ready = await request(t.baseUrl).get('/health/ready').expect(200);
    expect(ready.body.checks.postgres).toMatchObject({ ok: true });
  });

  it('is not ready when a migration is missing', async () => {
    const client = await t.db.client();
    await client.query(
      `DELETE FROM typeorm_migrations WHERE name = 'VectorPendingIndex1763800000001'`,
    );
    try {
      const ready = await request(t.baseUrl).get('/health/ready').expect(503);
      expect(ready.body.checks.postgres.detail).toMatch(/migrations are pending/);
    } finally {
      await client.query(
        `INSERT INTO typeorm_migrations (timestamp, name) VALUES (1763800000001, 'VectorPendingIndex1763800000001')`,
      );
    }
  });

  it('serves Prometheus metrics with route templates, never raw ids', async () => {
    await request(t.baseUrl).get('/documents/secret/path/doc.md').expect(404);
    const metrics = await request(t.baseUrl).get('/metrics').expect(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metrics.text).toContain('process_cpu_user_seconds_total');
    expect(metrics.text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/documents\/\*id",status="404"\} 1/,
    );
    expect(metrics.text).not.toContain('secret/path');
    expect(metrics.text).toMatch(/^vector_sync_lag_seconds 0$/m);
    expect(metrics.text).toMatch(/^vector_sync_pending_documents 0$/m);
  });

  it('computes vector lag from the oldest pending document at scrape time', async () => {
    const client = await t.db.client();
    await client.query(
      `INSERT INTO kb_documents (document_id, body, content_hash, vector_queued_at)
       VALUES ('lag/a.md', 'a', 'h', now() - interval '42 seconds'), ('lag/b.md', 'b', 'h', now())`,
    );
    const metrics = await request(t.baseUrl).get('/metrics').expect(200);
    const lag = Number(/^vector_sync_lag_seconds (\S+)$/m.exec(metrics.text)?.[1]);
    expect(lag).toBeGreaterThanOrEqual(42);
    expect(lag).toBeLessThan(60);
    expect(metrics.text).toMatch(/^vector_sync_pending_documents 2$/m);
  });
});
