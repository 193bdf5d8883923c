import type { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { planNodes } from './support/explain';
import { startTestApp, TestApp } from './support/app';

describe('metrics of the documents API', () => {
  let t: TestApp;
  let db: Client;
  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
  });
  afterAll(() => t.close());

  it('labels requests with route templates, never raw ids or paths', async () => {
    await request(t.baseUrl)
      .post('/documents')
      .send({ document_id: 'private/alice/diary.md', body: 'x' })
      .expect(201);
    await request(t.baseUrl).get('/documents/private/alice/diary.md/history').expect(200);
    await request(t.baseUrl)
      .put('/documents/private/bob/secret.md')
      .send({ body: 'x' })
      .expect(404);
    await request(t.baseUrl).get('/documents?prefix=private/alice').expect(200);
    await request(t.baseUrl).get('/no/such/route/token-abc123').expect(404);

    const metrics = await request(t.baseUrl).get('/metrics').expect(200);
    const labels = metrics.text
      .split('\n')
      .filter((line) => line.startsWith('http_request_duration_seconds_count'));
    expect(labels).toEqual(
      expect.arrayContaining([
        'http_request_duration_seconds_count{method="POST",route="/documents",status="201"} 1',
        'http_request_duration_seconds_count{method="GET",route="/documents/*id/history",status="200"} 1',
        'http_request_duration_seconds_count{method="PUT",route="/documents/*id",status="404"} 1',
        'http_request_duration_seconds_count{method="GET",route="/documents",status="200"} 1',
      ]),
    );
    // An unknown path is counted under a fixed label (whatever catch-all matched it).
    const unknown = labels.filter((line) => /method="GET",route="[^"]*",status="404"/.test(line));
    expect(unknown).toHaveLength(1);
    for (const raw of ['alice', 'bob', 'diary', 'secret', 'token-abc123', 'prefix']) {
      expect(metrics.text).not.toContain(raw);
    }
  });

  it('computes the vector lag at scrape time from the partial index, over 10 000+ rows', async () => {
    await db.query(
      `INSERT INTO kb_documents (document_id, body, content_hash, vector_status, vector_queued_at)
       SELECT 'lag/doc-' || i, 'b', 'h',
              CASE WHEN i % 120 = 0 THEN 'pending' ELSE 'ready' END,
              now() - (i || ' seconds')::interval
         FROM generate_series(1, 12000) AS i`,
    );
    await db.query(`ANALYZE kb_documents`);
    const expected = await db.query(
      `SELECT count(*)::int AS pending FROM kb_documents WHERE vector_status = 'pending'`,
    );

    // Capture the SQL the scrape really runs, then ask PostgreSQL how it runs it.
    const dataSource = t.app.get(DataSource);
    const spy = jest.spyOn(dataSource, 'query');
    let metrics: request.Response;
    let queries: string[];
    try {
      metrics = await request(t.baseUrl).get('/metrics').expect(200);
      queries = spy.mock.calls.map(([sql]) => sql);
    } finally {
      spy.mockRestore();
    }
    const lagQueries = queries.filter((sql) => /vector_status\s*=\s*'pending'/.test(sql));
    expect(lagQueries.length).toBeGreaterThan(0);

    expect(metrics.text).toMatch(
      new RegExp(`^vector_sync_pending_documents ${expected.rows[0].pending}$`, 'm'),
    );
    const lag = Number(/^vector_sync_lag_seconds (\S+)$/m.exec(metrics.text)?.[1]);
    expect(lag).toBeGreaterThanOrEqual(11_880);

    for (const sql of lagQueries) {
      const { rows } = await db.query(`EXPLAIN (FORMAT JSON) ${sql}`);
      const nodes = planNodes(rows[0]['QUERY PLAN'][0].Plan);
      expect(nodes.map((node) => node['Node Type'])).not.toContain('Seq Scan');
      expect(nodes.some((node) => node['Index Name'] === 'kb_documents_vector_pending_order')).toBe(
        true,
      );
    }
  });
});
