import { SchedulerRegistry } from '@nestjs/schedule';
import { Client } from 'pg';
import request from 'supertest';
import {
  CLAIM_VECTOR_WORK_SQL,
  VectorQueueRepository,
} from '../src/vectors/sync/vector-queue.repository';
import { LISTEN_APPLICATION_NAME as LISTENER_APPLICATION_NAME } from '../src/database/listen-connection';
import { VectorRecoverySweep } from '../src/vectors/sync/vector-recovery.sweep';
import { VectorSyncWorker } from '../src/vectors/sync/vector-sync.worker';
import { aDocument } from './factories';
import { startTestApp, TestApp } from './support/app';
import { waitFor } from './support/wait';

interface VectorRow {
  vector_status: string;
  vector_revision: number | null;
  revision: number;
  vector_claimed_at: Date | null;
  vector_lease_expires_at: Date | null;
  vector_attempts: number;
  vector_error: string | null;
}

describe('vector pipeline: local embedder, PostgreSQL store', () => {
  let t: TestApp;
  let sql: Client;

  beforeAll(async () => {
    t = await startTestApp({ VECTOR_SYNC_ENABLED: 'true', VECTOR_RETRY_BASE_MS: '50' });
    sql = await t.db.client();
  });
  afterAll(() => t.close());

  const row = async (id: string): Promise<VectorRow> =>
    (
      await sql.query(
        `SELECT vector_status, vector_revision, revision, vector_claimed_at, vector_lease_expires_at,
                vector_attempts, vector_error
           FROM kb_documents WHERE document_id = $1`,
        [id],
      )
    ).rows[0];
  const settled = (id: string, status: string, revision: number) =>
    waitFor(async () => {
      const r = await row(id);
      return (
        r.vector_status === status &&
        r.vector_revision === revision &&
        r.vector_lease_expires_at === null &&
        r
      );
    }, `${id} to be ${status} at revision ${revision}`);
  const chunks = async (id: string) =>
    (
      await sql.query(
        `SELECT chunk_index, revision, content FROM kb_chunk_vectors WHERE document_id = $1 ORDER BY chunk_index`,
        [id],
      )
    ).rows as { chunk_index: number; revision: number; content: string }[];
  const search = async (query: string, extra: Record<string, string> = {}) =>
    (
      await request(t.baseUrl)
        .get('/search')
        .query({ query, ...extra })
        .expect(200)
    ).body.results as {
      document_id: string;
      title: string;
      score: number;
      snippet: string;
    }[];
  const metric = async (name: string) => {
    const text = (await request(t.baseUrl).get('/metrics').expect(200)).text;
    return Number(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
  };

  it('answers a write at once with vector_status pending, then embeds it and finds it by /search', async () => {
    const created = await request(t.baseUrl)
      .post('/documents')
      .send(
        aDocument({
          document_id: 'kb/ops/listener.md',
          body: '# Listener\n\nThe listener reconnects with capped exponential backoff.',
          tags: ['ops'],
        }),
      )
      .expect(201);
    expect(created.body.vector_status).toBe('pending');

    await settled('kb/ops/listener.md', 'ready', 1);
    expect(await chunks('kb/ops/listener.md')).toEqual([
      {
        chunk_index: 0,
        revision: 1,
        content: '# Listener\n\nThe listener reconnects with capped exponential backoff.',
      },
    ]);
    // Embedded on the worker threads, before any search: the status says when it last worked.
    const status = (await request(t.baseUrl).get('/admin/vectors/status').expect(200)).body;
    expect(status.embedder.last_success_at).toEqual(expect.any(String));
    const results = await search('how does the listener reconnect');
    // Hybrid by default: the passage's heading path, the query's words highlighted.
    expect(results[0]).toEqual({
      document_id: 'kb/ops/listener.md',
      title: 'Listener',
      score: expect.any(Number),
      heading_path: 'Listener',
      snippet: '**Listener** The **listener** **reconnects** with capped exponential backoff.',
    });
    const [byMeaning] = await search('how does the listener reconnect', { mode: 'vector' });
    // Found by meaning; the query's words the passage holds are in bold all the same.
    expect(byMeaning).toMatchObject({
      document_id: 'kb/ops/listener.md',
      snippet: '**Listener** The **listener** **reconnects** with capped exponential backoff.',
    });
    expect(byMeaning.score).toBeGreaterThan(0.2);
    expect(await metric('vector_sync_documents_total{result="ready"}')).toBeGreaterThanOrEqual(1);
    expect(
      await metric('embedding_requests_total{provider="local",outcome="success"}'),
    ).toBeGreaterThanOrEqual(2);
  });

  it('re-embeds an update and leaves no chunk of the old revision', async () => {
    const id = 'kb/update/long.md';
    const sections = Array.from(
      { length: 6 },
      (_, i) =>
        `## Part ${i}\n\n${`Zebracorn facts number ${i} are described at length here. `.repeat(60)}`,
    );
    await request(t.baseUrl)
      .post('/documents')
      .send(aDocument({ document_id: id, body: `# Long\n\n${sections.join('\n\n')}` }))
      .expect(201);
    await settled(id, 'ready', 1);
    expect((await chunks(id)).length).toBeGreaterThan(5);
    expect((await search('zebracorn facts')).map((r) => r.document_id)).toContain(id);

    await request(t.baseUrl)
      .put(`/documents/${id}`)
      .send({ body: '# Short\n\nNow only about quokkas.' })
      .expect(200);
    await settled(id, 'ready', 2);
    expect(await chunks(id)).toEqual([
      { chunk_index: 0, revision: 2, content: '# Short\n\nNow only about quokkas.' },
    ]);
    expect((await search('zebracorn facts')).map((r) => r.document_id)).not.toContain(id);
    expect((await search('quokkas'))[0]).toMatchObject({ document_id: id, title: 'Long' });
  });

  it('removes a deleted document from search at once and its points soon after; restore brings it back', async () => {
    const id = 'kb/delete/pelican.md';
    await request(t.baseUrl)
      .post('/documents')
      .send(aDocument({ document_id: id, body: 'Pelicans store fish in their pouch.' }))
      .expect(201);
    await settled(id, 'ready', 1);
    expect((await search('pelicans pouch')).map((r) => r.document_id)).toContain(id);

    await request(t.baseUrl).delete(`/documents/${id}`).expect(200);
    // Search keeps only alive documents, whatever the store still holds.
    expect((await search('pelicans pouch')).map((r) => r.document_id)).not.toContain(id);
    await settled(id, 'removed', 2);
    expect(await chunks(id)).toEqual([]);

    await request(t.baseUrl).post(`/documents/${id}/restore`).send({}).expect(200);
    await settled(id, 'ready', 3);
    expect((await search('pelicans pouch')).map((r) => r.document_id)).toContain(id);
  });

  it('skips configured prefixes and empty bodies', async () => {
    await request(t.baseUrl)
      .post('/documents')
      .send(aDocument({ document_id: 'registries/skip.md', body: 'Registry entry about herons.' }))
      .expect(201);
    await request(t.baseUrl)
      .post('/documents')
      .send(aDocument({ document_id: 'kb/empty.md', body: '  \n ' }))
      .expect(201);
    await settled('registries/skip.md', 'skipped', 1);
    await settled('kb/empty.md', 'skipped', 1);
    expect(await chunks('registries/skip.md')).toEqual([]);
    expect((await search('herons')).map((r) => r.document_id)).not.toContain('registries/skip.md');
  });

  it('loses no document when the LISTEN backend is killed: it reconnects and sweeps', async () => {
    const listener = async () =>
      (
        await sql.query(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
          [LISTENER_APPLICATION_NAME],
        )
      ).rows.map((r) => r.pid as number);
    const [pid] = await listener();
    expect(pid).toEqual(expect.any(Number));
    const reconnects = await metric('vector_sync_listener_reconnects_total');

    // The documents commit (and notify) right after the listener is killed, long before it
    // can reconnect (its first retry waits at least 50 ms): those notifications are gone.
    await sql.query('BEGIN');
    await sql.query('SELECT pg_terminate_backend($1)', [pid]);
    await sql.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
       SELECT 'kb/killed/' || i || '.md', 'kb/killed', 'Killed ' || i, 'Ostriches run fast, note ' || i, 'h'
         FROM generate_series(1, 5) AS i`,
    );
    await sql.query('COMMIT');

    for (let i = 1; i <= 5; i++) await settled(`kb/killed/${i}.md`, 'ready', 1);
    const [newPid] = await waitFor(async () => {
      const pids = await listener();
      return pids.length === 1 && pids[0] !== pid && pids;
    }, 'a new listener connection');
    expect(newPid).not.toBe(pid);
    expect(await metric('vector_sync_listener_reconnects_total')).toBe(reconnects + 1);
    expect(await metric('vector_sync_listener_up')).toBe(1);
    const ready = await request(t.baseUrl).get('/health/ready').expect(200);
    expect(ready.body.checks.vector_listener).toMatchObject({ ok: true, required: true });
  });

  it('reindexes a prefix or everything on request', async () => {
    await request(t.baseUrl)
      .post('/documents')
      .send(aDocument({ document_id: 'reidx/a.md', body: 'Alpha text.' }))
      .expect(201);
    await request(t.baseUrl)
      .post('/documents')
      .send(aDocument({ document_id: 'reidx/b.md', body: 'Beta text.' }))
      .expect(201);
    await settled('reidx/a.md', 'ready', 1);
    await settled('reidx/b.md', 'ready', 1);
    const before = await metric('vector_sync_documents_total{result="ready"}');

    const one = await request(t.baseUrl)
      .post('/admin/vectors/reindex')
      .send({ prefix: 'reidx/' })
      .expect(202);
    expect(one.body).toEqual({ queued: 2, prefix: 'reidx/' });
    await waitFor(
      async () => (await metric('vector_sync_documents_total{result="ready"}')) >= before + 2,
      'two re-embeddings',
    );
    await settled('reidx/a.md', 'ready', 1);
    await settled('reidx/b.md', 'ready', 1);

    const total = Number((await sql.query(`SELECT count(*) FROM kb_documents`)).rows[0].count);
    const all = await request(t.baseUrl).post('/admin/vectors/reindex').expect(202);
    expect(all.body).toEqual({ queued: total, prefix: null });
    await waitFor(
      async () => (await request(t.baseUrl).get('/admin/vectors/status')).body.counts.pending === 0,
      'the queue to drain',
    );

    const bad = await request(t.baseUrl)
      .post('/admin/vectors/reindex')
      .send({ folder: 'x' })
      .expect(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'folder' });
  });

  it('reports status: counts, lag, listener, worker, embedder and store', async () => {
    const status = (await request(t.baseUrl).get('/admin/vectors/status').expect(200)).body;
    expect(status).toMatchObject({
      sync_enabled: true,
      counts: {
        pending: expect.any(Number),
        ready: expect.any(Number),
        error: 0,
        skipped: 2,
        removed: expect.any(Number),
      },
      leased: expect.any(Number),
      lag_seconds: expect.any(Number),
      errors: [],
      listener: { up: true, reconnects: expect.any(Number) },
      worker: { running: true, concurrency: 2, in_progress: expect.any(Number) },
      embedder: { provider: 'local', model: 'feature-hashing-v1-768', dimensions: 768, ok: true },
      store: { name: 'postgres', ready: true, error: null },
    });
  });

  it('schedules the recovery sweep from REINDEX_CRON', () => {
    const job = t.app.get(SchedulerRegistry).getCronJob('vector-recovery-sweep');
    expect(job.cronTime.source).toBe('*/5 * * * *');
    expect(job.isActive).toBe(true);
  });

  it('validates search input, naming the field', async () => {
    const field = async (query: Record<string, string | string[]>) =>
      (await request(t.baseUrl).get('/search').query(query).expect(400)).body.error.field;
    expect(await field({})).toBe('query');
    expect(await field({ query: '   ' })).toBe('query');
    expect(await field({ query: 'x'.repeat(2001) })).toBe('query');
    expect(await field({ query: 'x', limit: '0' })).toBe('limit');
    expect(await field({ query: 'x', limit: '51' })).toBe('limit');
    expect(await field({ query: 'x', limit: 'ten' })).toBe('limit');
    expect(await field({ query: 'x', prefix: 'a\u0001' })).toBe('prefix');
    expect(await field({ query: 'x', folder: 'a' })).toBe('folder');
    expect(await field({ query: ['a', 'b'] })).toBe('query');
  });

  it('filters search by folder prefix and tags, and honours the limit', async () => {
    const docs = [
      {
        document_id: 'zoo/birds/owl.md',
        body: 'Nocturnal animals hunt at night.',
        tags: ['birds', 'night'],
      },
      {
        document_id: 'zoo/mammals/bat.md',
        body: 'Nocturnal animals hunt at night with sonar.',
        tags: ['mammals', 'night'],
      },
      {
        document_id: 'farm/cat.md',
        body: 'Nocturnal animals hunt mice at night.',
        tags: ['mammals'],
      },
    ];
    for (const doc of docs) await request(t.baseUrl).post('/documents').send(doc).expect(201);
    for (const doc of docs) await settled(doc.document_id, 'ready', 1);
    const ids = async (extra: Record<string, string>) =>
      (await search('nocturnal animals', extra)).map((r) => r.document_id).sort();
    expect(await ids({ prefix: 'zoo' })).toEqual(['zoo/birds/owl.md', 'zoo/mammals/bat.md']);
    expect(await ids({ prefix: 'zoo/mammals/' })).toEqual(['zoo/mammals/bat.md']);
    expect(await ids({ tags: 'mammals' })).toEqual(['farm/cat.md', 'zoo/mammals/bat.md']);
    expect(await ids({ tags: 'mammals,night' })).toEqual(['zoo/mammals/bat.md']);
    expect(await search('nocturnal animals', { limit: '1' })).toHaveLength(1);
  });

  it('claims work through the pending index, never a scan of the table', async () => {
    await sql.query(
      `INSERT INTO kb_documents (document_id, body, content_hash, vector_status, vector_revision)
       SELECT 'bulk/' || i || '.md', 'x', 'h', 'ready', 1 FROM generate_series(1, 12000) AS i`,
    );
    await sql.query('ANALYZE kb_documents');
    const plan = (await sql.query(`EXPLAIN ${CLAIM_VECTOR_WORK_SQL}`, [4, 60000])).rows
      .map((r) => r['QUERY PLAN'] as string)
      .join('\n');
    expect(plan).toContain('kb_documents_vector_pending_order');
    expect(plan).not.toMatch(/Seq Scan on kb_documents/);
  });

  /**
   * A document written and embedded, then queued again by SQL alone: no notification, so the
   * worker sleeps until something wakes it.
   */
  const embeddedThenQueuedQuietly = async (id: string, body: string) => {
    await request(t.baseUrl)
      .post('/documents')
      .send(aDocument({ document_id: id, body }))
      .expect(201);
    await settled(id, 'ready', 1);
    await sql.query(
      `UPDATE kb_documents SET vector_status = 'pending', vector_queued_at = now()
        WHERE document_id = $1`,
      [id],
    );
    expect((await row(id)).vector_status).toBe('pending');
  };

  it('claims a pending document while another transaction holds its row by a foreign key', async () => {
    // Writing a document's passages, lexical record or vectors checks their foreign key to
    // kb_documents, which locks its row FOR KEY SHARE until that transaction ends (the lexical
    // pass writes a new revision's while a batch may finish). A claim that skipped such a row
    // found nothing, and a worker with nothing due slept until the next notification.
    const id = 'locks/held-by-a-reference.md';
    await embeddedThenQueuedQuietly(id, 'Kittiwakes nest on narrow ledges.');
    const holder = await t.db.client();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM kb_documents WHERE document_id = $1 FOR KEY SHARE`, [id]);
      // Woken once, as a finishing batch wakes it.
      t.app.get(VectorSyncWorker).wake();
      // Done while the reference still holds the row.
      await settled(id, 'ready', 1);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });

  it('looks again soon at a pending document that a transaction held and let go without writing', async () => {
    // A move refused or the links job locks a document FOR UPDATE and may end writing nothing:
    // no notification follows, so the worker that passed over it must look again by itself.
    const id = 'locks/held-then-released.md';
    await embeddedThenQueuedQuietly(id, 'Guillemots crowd the cliff tops.');
    const queue = t.app.get(VectorQueueRepository);
    const claim = queue.claim.bind(queue);
    const claimed: number[] = [];
    const spy = jest.spyOn(queue, 'claim').mockImplementation(async (limit, leaseMs) => {
      const rows = await claim(limit, leaseMs);
      claimed.push(rows.length);
      return rows;
    });
    const holder = await t.db.client();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM kb_documents WHERE document_id = $1 FOR UPDATE`, [id]);
      t.app.get(VectorSyncWorker).wake();
      await waitFor(() => claimed.includes(0), 'a claim that passes over the held document');
      expect((await row(id)).vector_status).toBe('pending');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
      spy.mockRestore();
    }
    await settled(id, 'ready', 1);
  });
});

describe('vector pipeline: a model with a short window', () => {
  let t: TestApp;
  let sql: Client;
  beforeAll(async () => {
    // 179 tokens: 70 % of a 256-token model's window, as a local model of that size gets.
    t = await startTestApp({
      VECTOR_SYNC_ENABLED: 'true',
      VECTOR_RETRY_BASE_MS: '50',
      VECTOR_MAX_ATTEMPTS: '2',
      EMBEDDINGS_MAX_INPUT_TOKENS: '179',
    });
    sql = await t.db.client();
  });
  afterAll(() => t.close());

  it('makes a document whose heading is a line of badge links longer than the window searchable', async () => {
    // A README's first heading: badge images inside links, no space within any of them.
    const badges = ['license', 'coverage', 'npm', 'registry', 'chat', 'downloads']
      .map(
        (name) =>
          `[![${name}](https://img.shields.io/badge/${name}-${'0f1e2d3c'.repeat(3)}-blue.svg?style=flat)](https://example.org/project/${name}/${'abc123'.repeat(4)})`,
      )
      .join(' ');
    const id = 'kb/readme/badges.md';
    await request(t.baseUrl)
      .post('/documents')
      .send(
        aDocument({
          document_id: id,
          body: `# quokkakit ${badges}\n\nQuokkakit folds wombat timetables into small bundles.\n\n## Usage\n\nCall fold() once per timetable.`,
        }),
      )
      .expect(201);
    // This app's chunking threads start on its first document, compiled from TypeScript, at
    // a lower priority: on a loaded machine that alone has taken over 20 s.
    const settledRow = await waitFor(
      async () => {
        const { rows } = await sql.query(
          `SELECT vector_status, vector_error FROM kb_documents WHERE document_id = $1`,
          [id],
        );
        return ['ready', 'error'].includes(rows[0].vector_status) && rows[0];
      },
      `${id} to be embedded or failed`,
      60_000,
    );
    expect(settledRow).toEqual({ vector_status: 'ready', vector_error: null });

    const results = (
      await request(t.baseUrl).get('/search').query({ query: 'wombat timetables' }).expect(200)
    ).body.results as { document_id: string }[];
    expect(results[0]).toMatchObject({ document_id: id });
  }, 90_000);
});

describe('recovery sweep', () => {
  let t: TestApp;
  let sql: Client;
  beforeAll(async () => {
    // Sync off: only the sweep moves these documents.
    t = await startTestApp({ VECTOR_MAX_ATTEMPTS: '4' });
    sql = await t.db.client();
  });
  afterAll(() => t.close());

  it('ends expired leases, gives every error one more attempt, and re-queues ready documents that are behind', async () => {
    await sql.query(
      `INSERT INTO kb_documents (document_id, body, content_hash, vector_status, vector_revision,
                                vector_attempts, vector_claimed_at, vector_lease_expires_at,
                                vector_next_attempt_at, vector_error)
       VALUES ('s/expired.md', 'x', 'h', 'pending', NULL, 2, now() - interval '1 hour', now() - interval '1 minute', NULL, NULL),
              ('s/held.md',    'x', 'h', 'pending', NULL, 1, now(), now() + interval '1 hour', NULL, NULL),
              ('s/error-a.md', 'x', 'h', 'error', NULL, 4, NULL, NULL, NULL, 'boom'),
              ('s/error-b.md', 'x', 'h', 'error', NULL, 6, NULL, NULL, NULL, 'boom'),
              ('s/behind.md',  'x', 'h', 'ready', 1, 0, NULL, NULL, NULL, NULL),
              ('s/current.md', 'x', 'h', 'ready', 1, 0, NULL, NULL, NULL, NULL)`,
    );
    // A revision bump without a content change fires no trigger: embedded revision 1 is behind.
    await sql.query(`UPDATE kb_documents SET revision = 2 WHERE document_id = 's/behind.md'`);

    const counts = await t.app.get(VectorRecoverySweep).run();
    expect(counts).toEqual({ expired: 1, errors: 2, behind: 1 });

    const rows = Object.fromEntries(
      (
        await sql.query(
          `SELECT document_id, vector_status, vector_attempts, vector_claimed_at IS NOT NULL AS claimed,
                  vector_lease_expires_at IS NOT NULL AS leased
             FROM kb_documents WHERE document_id LIKE 's/%'`,
        )
      ).rows.map((r) => [
        r.document_id,
        {
          status: r.vector_status,
          attempts: r.vector_attempts,
          claimed: r.claimed,
          leased: r.leased,
        },
      ]),
    );
    expect(rows).toEqual({
      's/expired.md': { status: 'pending', attempts: 2, claimed: false, leased: false },
      's/held.md': { status: 'pending', attempts: 1, claimed: true, leased: true },
      // One attempt left before `error` again (VECTOR_MAX_ATTEMPTS 4 in this app).
      's/error-a.md': { status: 'pending', attempts: 3, claimed: false, leased: false },
      's/error-b.md': { status: 'pending', attempts: 3, claimed: false, leased: false },
      's/behind.md': { status: 'pending', attempts: 0, claimed: false, leased: false },
      's/current.md': { status: 'ready', attempts: 0, claimed: false, leased: false },
    });
    await expect(t.app.get(VectorRecoverySweep).run()).resolves.toEqual({
      expired: 0,
      errors: 0,
      behind: 0,
    });
  });

  it('with VECTOR_SYNC_ENABLED=false runs no listener, no worker and no schedule', async () => {
    const listeners = await sql.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
      [LISTENER_APPLICATION_NAME],
    );
    expect(listeners.rows[0].n).toBe(0);
    const status = (await request(t.baseUrl).get('/admin/vectors/status').expect(200)).body;
    expect(status).toMatchObject({
      sync_enabled: false,
      worker: { running: false },
      listener: { up: false },
    });
    expect(t.app.get(SchedulerRegistry).doesExist('cron', 'vector-recovery-sweep')).toBe(false);
    const ready = await request(t.baseUrl).get('/health/ready').expect(200);
    expect(ready.body.checks.vector_listener).toMatchObject({ ok: true, required: false });
    const created = await request(t.baseUrl).post('/documents').send(aDocument()).expect(201);
    expect(created.body.vector_status).toBe('pending');
  });
});
