import { Client } from 'pg';
import request from 'supertest';
import { aDocument } from './factories';
import { VectorBatchProcessor } from '../src/vectors/sync/vector-batch.processor';
import { ANALYZER_VERSION } from '../src/vectors/text/analyzer';
import { createTestDatabase, TestDatabase } from './support/database';
import { FakeOpenAi } from './support/fake-openai';
import { startTestApp, TestApp } from './support/app';
import { waitFor } from './support/wait';

jest.setTimeout(30_000);

const DIMENSIONS = 32;

/** An app whose embedder is the fake OpenAI server. */
function openAiEnv(fake: FakeOpenAi, extra: Record<string, string> = {}): Record<string, string> {
  return {
    VECTOR_SYNC_ENABLED: 'true',
    EMBEDDINGS_PROVIDER: 'openai',
    OPENAI_API_KEY: 'sk-test-not-a-real-key',
    OPENAI_BASE_URL: fake.url,
    EMBEDDINGS_MODEL: 'test-embedding',
    EMBEDDINGS_DIMENSIONS: String(DIMENSIONS),
    OPENAI_MAX_RETRIES: '0',
    VECTOR_RETRY_BASE_MS: '50',
    ...extra,
  };
}

async function statusOf(sql: Client, id: string) {
  const { rows } = await sql.query(
    `SELECT vector_status, vector_revision, revision, vector_error, vector_lease_expires_at
       FROM kb_documents WHERE document_id = $1`,
    [id],
  );
  return rows[0] as {
    vector_status: string;
    vector_revision: number | null;
    revision: number;
    vector_error: string | null;
    vector_lease_expires_at: Date | null;
  };
}

async function settled(
  sql: Client,
  id: string,
  status: string,
  revision: number,
  timeoutMs = 20_000,
  context?: () => Promise<unknown>,
) {
  let last: Awaited<ReturnType<typeof statusOf>> | undefined;
  try {
    return await waitFor(
      async () => {
        const row = (last = await statusOf(sql, id));
        return (
          row.vector_status === status &&
          row.vector_revision === revision &&
          !row.vector_lease_expires_at &&
          row
        );
      },
      `${id} ${status} at revision ${revision}`,
      timeoutMs,
    );
  } catch (error) {
    // What the queue held, and what the worker said, make a timeout on a loaded machine
    // readable from the log alone.
    const more = context === undefined ? '' : `; then: ${JSON.stringify(await context())}`;
    throw new Error(`${(error as Error).message}; last read: ${JSON.stringify(last)}${more}`);
  }
}

async function metric(t: TestApp, name: string): Promise<number> {
  const text = (await request(t.baseUrl).get('/metrics').expect(200)).text;
  const value = new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1];
  return value === undefined ? 0 : Number(value);
}

describe('OpenAI embedder against a fake /v1/embeddings', () => {
  let fake: FakeOpenAi;
  let t: TestApp;
  let sql: Client;

  beforeEach(async () => {
    fake = await new FakeOpenAi(DIMENSIONS).start();
  });
  afterEach(async () => {
    fake.release();
    await t?.close();
    await fake.close();
  });

  async function start(extra: Record<string, string> = {}) {
    t = await startTestApp(openAiEnv(fake, extra));
    sql = await t.db.client();
  }

  it('answers a write before any embedding: the write returns while the embedding request is held', async () => {
    await start();
    fake.holdWhen(() => true);
    const created = await request(t.baseUrl)
      .post('/documents')
      .send(aDocument({ document_id: 'held/doc.md', body: 'Cormorants dive for fish.' }))
      .expect(201);
    expect(created.body).toMatchObject({ document_id: 'held/doc.md', vector_status: 'pending' });
    await fake.waitForHeld();
    // The embedding is still in flight, and the write has long been answered.
    expect(fake.heldCount).toBe(1);
    expect((await statusOf(sql, 'held/doc.md')).vector_status).toBe('pending');
    fake.release();
    await settled(sql, 'held/doc.md', 'ready', 1);
    const request0 = fake.requests[0];
    expect(request0).toMatchObject({
      model: 'test-embedding',
      dimensions: DIMENSIONS,
      encoding_format: 'float',
      authorization: 'Bearer sk-test-not-a-real-key',
    });
    expect(request0.input[0]).toContain('Cormorants dive for fish.');
    const results = (
      await request(t.baseUrl).get('/search').query({ query: 'cormorants diving' }).expect(200)
    ).body.results;
    expect(results[0]).toMatchObject({ document_id: 'held/doc.md' });
    expect(await metric(t, 'embedding_requests_total{provider="openai",outcome="success"}')).toBe(
      2,
    );
  });

  /** How long a step may take on a machine running other suites' servers and models beside. */
  const LOADED_MS = 120_000;
  // A document of some 25 KB, chunked and embedded in three requests: on such a machine it
  // once took more than 20 s.
  it(
    'batches the inputs of a long document within EMBEDDINGS_BATCH_SIZE',
    async () => {
      await start({ EMBEDDINGS_BATCH_SIZE: '4' });
      const sections = Array.from(
        { length: 10 },
        (_, i) => `## Section ${i}\n\n${`Words about topic ${i}. `.repeat(120)}`,
      );
      await request(t.baseUrl)
        .post('/documents')
        .send(aDocument({ document_id: 'batch/long.md', body: sections.join('\n\n') }))
        .expect(201);
      await settled(sql, 'batch/long.md', 'ready', 1, LOADED_MS);
      const chunks = Number(
        (
          await sql.query(
            `SELECT count(*) FROM kb_chunk_vectors WHERE document_id = 'batch/long.md'`,
          )
        ).rows[0].count,
      );
      expect(chunks).toBeGreaterThan(8);
      const sizes = fake.requests.map((r) => r.input.length);
      expect(sizes.every((n) => n <= 4)).toBe(true);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(chunks);
      expect(fake.requests).toHaveLength(Math.ceil(chunks / 4));
    },
    LOADED_MS + 30_000,
  );

  it('retries 429 and 5xx answers (the client honours Retry-After) and counts every attempt', async () => {
    await start({ OPENAI_MAX_RETRIES: '3' });
    fake.failNext(429, 500, 503);
    await request(t.baseUrl)
      .post('/documents')
      .send(aDocument({ document_id: 'retry/doc.md', body: 'Gannets plunge.' }))
      .expect(201);
    await settled(sql, 'retry/doc.md', 'ready', 1);
    // One document, one embed call: four HTTP attempts, the last one answered.
    expect(fake.requests).toHaveLength(4);
    expect((await statusOf(sql, 'retry/doc.md')).vector_error).toBeNull();
    expect(
      await metric(t, 'embedding_requests_total{provider="openai",outcome="rate_limited"}'),
    ).toBe(1);
    expect(
      await metric(t, 'embedding_requests_total{provider="openai",outcome="server_error"}'),
    ).toBe(2);
    expect(await metric(t, 'embedding_requests_total{provider="openai",outcome="success"}')).toBe(
      1,
    );
    expect(await metric(t, 'embedding_request_duration_seconds_count{provider="openai"}')).toBe(4);
  });

  it('rejects vectors of the wrong length with a message saying what to configure', async () => {
    await start({ VECTOR_MAX_ATTEMPTS: '1' });
    fake.answerLength(8);
    await request(t.baseUrl)
      .post('/documents')
      .send(aDocument({ document_id: 'dims/doc.md', body: 'Boobies nest.' }))
      .expect(201);
    const row = await waitFor(async () => {
      const r = await statusOf(sql, 'dims/doc.md');
      return r.vector_status === 'error' && r;
    }, 'the document to be in error');
    expect(row.vector_error).toMatch(
      /dimension mismatch: the embeddings server returned 8-dimensional vectors for model "test-embedding", but 32 dimensions are expected; set EMBEDDINGS_DIMENSIONS/,
    );
    expect(await metric(t, 'vector_sync_documents_total{result="error"}')).toBe(1);
    const search = await request(t.baseUrl)
      .get('/search')
      .query({ query: 'boobies', mode: 'vector' })
      .expect(502);
    expect(search.body.error).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(search.body.error.message).toMatch(/the embedder failed: dimension mismatch/);
    // Hybrid answers from the lexical side and says why.
    const hybrid = await request(t.baseUrl).get('/search').query({ query: 'boobies' }).expect(200);
    expect(hybrid.body).toMatchObject({
      mode: 'hybrid',
      degraded: true,
      degraded_reason: expect.stringMatching(/the embedder failed: dimension mismatch/),
    });
    const status = (await request(t.baseUrl).get('/admin/vectors/status').expect(200)).body;
    expect(status.errors).toEqual([
      expect.objectContaining({
        document_id: 'dims/doc.md',
        attempts: 1,
        error: expect.stringContaining('dimension mismatch'),
      }),
    ]);
    const ready = await request(t.baseUrl).get('/health/ready').expect(200);
    expect(ready.body.checks.embedder).toMatchObject({ ok: false, required: false });
  });

  it('survives an outage: writes stay fast, no attempt is burned, the worker waits, and every document becomes ready after recovery', async () => {
    await start();
    fake.outage(503);
    for (let i = 0; i < 8; i++) {
      const created = await request(t.baseUrl)
        .post('/documents')
        .send(aDocument({ document_id: `outage/${i}.md`, body: `Albatross note ${i}` }))
        .expect(201);
      expect(created.body.vector_status).toBe('pending');
    }
    // The first failure gives the batch back and stops claiming; the embedder is then only
    // asked every 2 s (one small probe), not once per document.
    await waitFor(async () => fake.failures >= 2, 'a failed batch and a failed probe');
    const status = (await request(t.baseUrl).get('/admin/vectors/status').expect(200)).body;
    expect(status.worker.waiting_for_embedder).toBe(true);
    expect(status.embedder.ok).toBe(false);
    expect(await metric(t, 'vector_sync_pending_documents')).toBe(8);
    // Lexical search keeps up meanwhile. Nothing has searched, so this server has not loaded
    // its copy of the index yet: the status counts what PostgreSQL holds, not "0 documents".
    await waitFor(async () => {
      const { lexical } = (await request(t.baseUrl).get('/admin/vectors/status')).body;
      return lexical.loaded === false && lexical.documents === 8;
    }, 'the 8 documents counted as indexed lexically before the copy is loaded');
    expect(
      await metric(t, 'vector_sync_documents_total{result="released"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(await metric(t, 'vector_sync_documents_total{result="retry"}')).toBe(0);
    const during = await sql.query(
      `SELECT max(vector_attempts) AS attempts, count(*) FILTER (WHERE vector_status = 'error') AS errors
         FROM kb_documents WHERE document_id LIKE 'outage/%'`,
    );
    expect(during.rows[0]).toEqual({ attempts: 0, errors: '0' });
    await waitFor(
      async () => (await metric(t, 'vector_sync_lag_seconds')) > 0.2,
      'the lag to rise',
    );
    const failedSoFar = fake.failures;

    fake.recover();
    for (let i = 0; i < 8; i++) await settled(sql, `outage/${i}.md`, 'ready', 1);
    expect(await metric(t, 'vector_sync_lag_seconds')).toBe(0);
    expect((await statusOf(sql, 'outage/3.md')).vector_error).toBeNull();
    // A handful of probes, not a retry storm.
    expect(failedSoFar).toBeLessThan(20);
  });

  it('indexes every document again lexically after an analyzer change, and embeds none again', async () => {
    const db = await createTestDatabase();
    try {
      t = await startTestApp(openAiEnv(fake), db);
      const ids = ['analyzer/a.md', 'analyzer/b.md', 'analyzer/c.md'];
      for (const [i, id] of ids.entries()) {
        await request(t.baseUrl)
          .post('/documents')
          .send(aDocument({ document_id: id, body: `Gannets plunge for fish, note ${i}.` }))
          .expect(201);
      }
      const client = await db.client();
      for (const id of ids) await settled(client, id, 'ready', 1);
      await t.close();
      // As if an earlier release's analyzer had written the records.
      await client.query(`UPDATE kb_lexical_documents SET analyzer = analyzer - 1`);
      const embedded = fake.embeddedInputs().length;

      // One document the lexical pass cannot take (as one too large to chunk) holds up none
      // of the others.
      const indexLexically = VectorBatchProcessor.prototype.indexLexically;
      const failing = jest
        .spyOn(VectorBatchProcessor.prototype, 'indexLexically')
        .mockImplementation(function (this: VectorBatchProcessor, rows, signal) {
          if (rows.some((row) => row.document_id === 'analyzer/b.md')) {
            return Promise.reject(new Error('the chunking thread ran out of memory'));
          }
          return indexLexically.call(this, rows, signal);
        });
      try {
        t = await startTestApp(openAiEnv(fake), db);
        await waitFor(async () => {
          const { rows } = await client.query(
            `SELECT document_id FROM kb_lexical_documents WHERE analyzer = $1 ORDER BY 1`,
            [ANALYZER_VERSION],
          );
          return rows.map((row) => row.document_id).join() === 'analyzer/a.md,analyzer/c.md';
        }, 'the records other than the failing one written again under the current analyzer');
      } finally {
        failing.mockRestore();
      }
      await t.close();
      t = await startTestApp(openAiEnv(fake), db);
      await waitFor(async () => {
        const { rows } = await client.query(
          `SELECT count(*)::int AS n FROM kb_lexical_documents WHERE analyzer = $1`,
          [ANALYZER_VERSION],
        );
        return rows[0].n === ids.length;
      }, 'every record written again under the current analyzer at the next start');
      const { rows } = await client.query(
        `SELECT DISTINCT vector_status FROM kb_documents WHERE document_id = ANY($1)`,
        [ids],
      );
      expect(rows).toEqual([{ vector_status: 'ready' }]);
      expect(fake.embeddedInputs()).toHaveLength(embedded);
      const found = await request(t.baseUrl)
        .get('/search')
        .query({ query: 'gannets plunge', mode: 'lexical' })
        .expect(200);
      expect(found.body.results.map((r: { document_id: string }) => r.document_id).sort()).toEqual(
        ids,
      );
    } finally {
      const last = t;
      t = undefined as unknown as TestApp;
      await last?.close().catch(() => undefined);
      await db.drop();
    }
  });

  // The order of events is fixed by the fake, not by timing: the embedding of version one
  // is held until version two has been written. What a loaded machine stretches is only how
  // long each step takes (this test once ran out of the 30 s every test gets, in a full run
  // on a busy machine), hence the generous waits.
  it(
    'ends with the final revision embedded when an update lands during an embedding',
    async () => {
      // A lease that outlives the held request even if a loaded machine renews it late: an
      // expired one would let the worker's other slot take revision 2 while revision 1 is
      // held, and revision 1 would end 'lost' rather than 'stale'.
      await start({ VECTOR_LEASE_MS: String(LOADED_MS) });
      fake.holdWhen((r) => r.input.some((text) => text.includes('version-one')));
      await request(t.baseUrl)
        .post('/documents')
        .send(aDocument({ document_id: 'race/doc.md', body: 'Puffins, version-one of this note.' }))
        .expect(201);
      await waitFor(() => fake.heldCount > 0, 'the embedding of version one to arrive', LOADED_MS);
      const updated = await request(t.baseUrl)
        .put('/documents/race/doc.md')
        .send({ body: 'Puffins, version-two of this note.' })
        .expect(200);
      expect(updated.body).toMatchObject({ revision: 2, vector_status: 'pending' });
      fake.release();

      await settled(sql, 'race/doc.md', 'ready', 2, LOADED_MS, async () => ({
        worker: (await request(t.baseUrl).get('/admin/vectors/status')).body.worker,
        embedded: fake.embeddedInputs(),
        held: fake.heldCount,
        abandoned: fake.abandoned,
      }));
      const chunks = await sql.query(
        `SELECT revision, content FROM kb_chunk_vectors WHERE document_id = 'race/doc.md'`,
      );
      expect(chunks.rows).toEqual([{ revision: 2, content: 'Puffins, version-two of this note.' }]);
      const inputs = fake.embeddedInputs();
      expect(inputs.filter((text) => text.includes('version-one'))).toHaveLength(1);
      expect(inputs.filter((text) => text.includes('version-two'))).toHaveLength(1);
      expect(await metric(t, 'vector_sync_documents_total{result="stale"}')).toBe(1);
      const hits = (
        await request(t.baseUrl).get('/search').query({ query: 'puffins note' }).expect(200)
      ).body.results;
      expect(hits[0].snippet).toContain('version-two');
    },
    3 * LOADED_MS,
  );
});

describe('two servers on one database', () => {
  let fake: FakeOpenAi;
  let db: TestDatabase;
  let one: TestApp;
  let two: TestApp;

  beforeAll(async () => {
    fake = await new FakeOpenAi(DIMENSIONS).start();
    db = await createTestDatabase();
    one = await startTestApp(openAiEnv(fake, { VECTOR_WORKER_CONCURRENCY: '3' }), db);
    two = await startTestApp(openAiEnv(fake, { VECTOR_WORKER_CONCURRENCY: '3' }), db);
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    await db.drop();
    await fake.close();
  });

  it('embed each document once between them (SKIP LOCKED and leases), and both serve search', async () => {
    const sql = await db.client();
    // Slow answers keep both workers busy at the same time.
    fake.holdWhen(() => true);
    const ids = Array.from({ length: 40 }, (_, i) => `shared/doc-${i}.md`);
    await Promise.all(
      ids.map((id, i) =>
        request((i % 2 ? one : two).baseUrl)
          .post('/documents')
          .send(aDocument({ document_id: id, body: `Shared note marker-${i}-end about terns.` }))
          .expect(201),
      ),
    );
    await fake.waitForHeld();
    await new Promise((resolve) => setTimeout(resolve, 50));
    fake.release();
    for (const id of ids) await settled(sql, id, 'ready', 1);

    const inputs = fake.embeddedInputs();
    for (let i = 0; i < ids.length; i++) {
      expect(inputs.filter((text) => text.includes(`marker-${i}-end`))).toHaveLength(1);
    }
    const per = async (t: TestApp) => metric(t, 'vector_sync_documents_total{result="ready"}');
    const [a, b] = [await per(one), await per(two)];
    expect(a + b).toBe(ids.length);
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);

    for (const t of [one, two]) {
      const hits = (
        await request(t.baseUrl)
          .get('/search')
          .query({ query: 'marker-7-end terns', limit: 40 })
          .expect(200)
      ).body.results;
      expect(hits).toHaveLength(40);
    }
    const claimed = await sql.query(
      `SELECT count(*)::int AS n FROM kb_documents WHERE vector_claimed_at IS NOT NULL`,
    );
    expect(claimed.rows[0].n).toBe(0);
  });
});
