import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createApp } from '../src/app.factory';
import { loadConfig } from '../src/config/load-config';
import { VectorWorkPool } from '../src/vectors/work/vector-work.pool';
import { callTool, toolJson } from './support/mcp-http';
import { modernPost } from './support/mcp-modern';
import { OwnPostgres } from './support/own-postgres';
import { waitFor } from './support/wait';

jest.setTimeout(120_000);

/**
 * The server against a PostgreSQL it does not own, which the test stops, starts and
 * restarts (docs/operations.md): no acknowledged write is lost, no vector work is stranded, an outage
 * is answered 503 / UNAVAILABLE without internal addresses, /metrics keeps answering, and
 * readiness follows the database. Times are the bench's business: these tests wait for
 * outcomes (bounded), never assert durations.
 */
describe('PostgreSQL faults', () => {
  let pg: OwnPostgres;
  let app: NestExpressApplication;
  let baseUrl: string;

  beforeAll(async () => {
    pg = await OwnPostgres.create();
    const config = loadConfig({
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      DATABASE_URL: pg.url,
      MIGRATIONS_RUN: 'false',
      VECTOR_SYNC_ENABLED: 'true',
      VECTOR_LEASE_MS: '3000',
      DB_POOL_SIZE: '6',
    });
    app = await createApp(config);
    await app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await pg?.destroy();
  });

  /** Polls `probe` until it returns a value (at most 30 s; errors are "not yet": the cluster restarts). */
  function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
    return waitFor(probe, what, { timeoutMs: 30_000, intervalMs: 50, retryErrors: true });
  }

  /** Rows of one query on a connection of its own (the cluster restarts between queries). */
  async function select<T extends object>(text: string, params: unknown[]): Promise<T[]> {
    const client = await pg.client();
    try {
      return (await client.query<T>(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  /** Waits until every one of `ids` is `ready` (at most 30 s). */
  const allReady = (what: string, ids: readonly string[]) =>
    eventually(what, async () => ((await notReady(ids)).length === 0 ? true : undefined));

  async function notReady(ids: readonly string[]): Promise<string[]> {
    const rows = await select<{ document_id: string; vector_status: string }>(
      `SELECT document_id, vector_status FROM kb_documents WHERE document_id = ANY($1)`,
      [ids],
    );
    const ready = new Set(
      rows.filter((r) => r.vector_status === 'ready').map((r) => r.document_id),
    );
    return ids.filter((id) => !ready.has(id));
  }

  it('keeps every acknowledged write of a stream across a restart, refuses only with 503 + Retry-After meanwhile, and embeds everything after', async () => {
    const acknowledged: string[] = [];
    const refusals: Array<{ status: number; body: unknown; retryAfter: string | undefined }> = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const id = `stream/doc-${i}.md`;
        const response = await request(baseUrl)
          .post('/documents')
          .send({ document_id: id, body: `# Note ${i}\n\nWritten during a restart.` })
          .catch(() => undefined);
        if (response?.status === 201) acknowledged.push(id);
        else if (response)
          refusals.push({
            status: response.status,
            body: response.body,
            retryAfter: response.headers['retry-after'],
          });
      }
    })();
    await eventually('the first writes', async () =>
      acknowledged.length >= 20 ? true : undefined,
    );
    await pg.restart();
    const before = acknowledged.length;
    await eventually('writes after the restart', async () =>
      acknowledged.length >= before + 20 ? true : undefined,
    );
    writing = false;
    await writer;

    // Every refusal was an honest outage answer.
    for (const refusal of refusals) {
      expect(refusal).toEqual({
        status: 503,
        retryAfter: '5',
        body: {
          error: {
            code: 'UNAVAILABLE',
            message: "the knowledge base's database is not reachable right now; retry in 5 seconds",
            retry_after_seconds: 5,
          },
        },
      });
    }
    const stored = await select(
      `SELECT document_id FROM kb_documents WHERE document_id = ANY($1) AND deleted_at IS NULL`,
      [acknowledged],
    );
    expect(stored).toHaveLength(acknowledged.length);
    // Nothing stranded: every document is embedded soon after.
    await allReady('every document ready', acknowledged);
  });

  describe('an outage', () => {
    const metricsDuring: number[] = [];
    beforeAll(async () => {
      await request(baseUrl)
        .post('/documents')
        .send({ document_id: 'outage/known.md', body: '# Known' })
        .expect(201);
      // Embedded first, so that a search has hits whose titles it must read from PostgreSQL.
      await allReady('the known document ready', ['outage/known.md']);
      await pg.stop();
    });
    afterAll(async () => {
      await pg.start().catch(() => undefined);
    });

    it('REST answers 503 UNAVAILABLE with Retry-After, naming no internal address', async () => {
      for (const call of [
        request(baseUrl).get('/documents/outage/known.md'),
        request(baseUrl).get('/documents'),
        request(baseUrl).post('/documents').send({ document_id: 'outage/new.md', body: 'x' }),
        request(baseUrl).get('/search').query({ query: 'known' }),
        request(baseUrl).get('/admin/vectors/status'),
      ]) {
        const response = await call;
        expect(response.status).toBe(503);
        expect(response.headers['retry-after']).toBe('5');
        expect(response.body.error.code).toBe('UNAVAILABLE');
        expect(JSON.stringify(response.body)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|:\d{4,5}\b/);
      }
    });

    it('MCP tools answer isError UNAVAILABLE with a hint to retry', async () => {
      for (const [tool, args] of [
        ['get_document', { document_id: 'outage/known.md' }],
        ['list_documents', {}],
        ['search_knowledge', { query: 'known' }],
        ['upload_document', { document_id: 'outage/mcp.md', content: 'x' }],
      ] as const) {
        const envelope = await callTool(baseUrl, '/mcp', tool, args);
        expect(envelope.result.isError).toBe(true);
        const { error } = toolJson(envelope);
        expect({ tool, code: error.code }).toEqual({ tool, code: 'UNAVAILABLE' });
        expect(error.hint).toMatch(/retry in a few seconds/);
        expect(JSON.stringify(envelope)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|:\d{4,5}\b/);
      }
    });

    it('MCP resources, prompts and completions answer a JSON-RPC error that names the outage', async () => {
      for (const [method, params] of [
        ['resources/read', { uri: 'kb://outage/known.md' }],
        ['resources/list', {}],
        ['prompts/get', { name: 'review_document', arguments: { document_id: 'outage/known.md' } }],
        [
          'completion/complete',
          {
            ref: { type: 'ref/resource', uri: 'kb://{+document_id}' },
            argument: { name: 'document_id', value: 'outage/' },
          },
        ],
      ] as const) {
        const response = await modernPost(baseUrl, '/mcp', method, params);
        expect({ method, status: response.status }).toEqual({ method, status: 200 });
        expect(response.body.error).toMatchObject({
          code: -32603,
          message: expect.stringMatching(/^Service unavailable: .*retry in 5 seconds/),
          data: { retry_after_seconds: 5 },
        });
        expect(JSON.stringify(response.body.error)).not.toMatch(
          /127\.0\.0\.1|ECONNREFUSED|:\d{4,5}\b/,
        );
      }
    });

    it('/metrics keeps answering, without the gauges that need the database', async () => {
      for (let i = 0; i < 3; i++) {
        const response = await request(baseUrl).get('/metrics');
        expect(response.status).toBe(200);
        expect(response.text).toMatch(/^vector_sync_listener_up 0$/m);
        expect(response.text).not.toMatch(/^vector_sync_lag_seconds \d/m);
        metricsDuring.push(
          Number(
            /metrics_scrape_errors_total\{collector="vector_queue"\} (\d+)/.exec(
              response.text,
            )?.[1] ?? 0,
          ),
        );
      }
      // One error per failed scrape (not one per gauge); a scrape shows the errors of the
      // scrapes before it (the counter is read while the collectors still run).
      expect(metricsDuring[2] - metricsDuring[0]).toBe(2);
    });

    it('readiness is 503 during, then 200 once the database is back; writes work again', async () => {
      const during = await request(baseUrl).get('/health/ready');
      expect(during.status).toBe(503);
      expect(JSON.stringify(during.body)).not.toMatch(/127\.0\.0\.1|:\d{4,5}\b/);
      await pg.start();
      await eventually('readiness', async () =>
        (await request(baseUrl).get('/health/ready')).status === 200 ? true : undefined,
      );
      await request(baseUrl)
        .post('/documents')
        .send({ document_id: 'outage/after.md', body: '# After' })
        .expect(201);
      await allReady('the new document embedded', ['outage/after.md']);
      const metrics = (await request(baseUrl).get('/metrics')).text;
      expect(metrics).toMatch(/^vector_sync_lag_seconds \d/m);
      expect(metrics).toMatch(/^vector_sync_listener_up 1$/m);
    });
  });

  it('worker threads that die mid-batch: their documents are redone, and the pool carries on', async () => {
    const pool = app.get(VectorWorkPool);
    // Threads that are up and running (one that dies while starting is not replaced:
    // piscina gives up on a pool whose threads fail to boot).
    await pool.embed(['warm'], 8);
    const ids = [0, 1, 2].map((i) => `big/doc-${i}.md`);
    const body = (i: number) => `# Big ${i}\n\n${'lorem ipsum dolor sit amet '.repeat(20_000)}`;
    for (const [i, id] of ids.entries()) {
      await request(baseUrl)
        .post('/documents')
        .send({ document_id: id, body: body(i) })
        .expect(201);
    }
    // Once a batch holds them (chunking and embedding 1.6 MB on the threads), every thread
    // goes down. The pool is private to the product: the test reaches into it.
    await eventually('the documents leased by a batch', async () => {
      const leased = await select(
        `SELECT 1 FROM kb_documents WHERE document_id = ANY($1) AND vector_lease_id IS NOT NULL`,
        [ids],
      );
      return leased.length > 0 ? true : undefined;
    });
    const threads = pool['pool'].threads;
    expect(threads.length).toBeGreaterThan(0);
    await Promise.all(threads.map((thread) => thread.terminate()));
    expect(await notReady(ids)).toEqual(ids);

    await allReady('every big document ready', ids);
    expect((await pool.embed(['still working'], 8)).map((v) => v.length)).toEqual([8]);
  });
});
