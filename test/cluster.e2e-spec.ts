import { getRandomPort } from 'get-port-please';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { ServerProcess, startServer } from './server-process-helpers';
import { createTestDatabase, TestDatabase } from './support/database';
import { waitFor } from './support/wait';

const KEY = 'cluster-test-key-7c1d9e3a5b';
/** A principal that reads open/ only. */
const READER_KEY = 'cluster-reader-key-5e0b2c8d41';
const POLICY = {
  rules: [
    { who: ['key:ops'], read: '*', write: ['*'] },
    { who: ['key:reader'], read: ['open/'], write: [] },
  ],
};
/** A word only the search test's documents hold. */
const WORD = 'quokkafjord';

interface LogLine {
  pid: number;
  msg: string;
}

/** One request on a connection of its own: node:cluster hands connections to the workers in turn. */
function getOnce(baseUrl: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${baseUrl}${path}`,
      { agent: false, headers: { 'X-API-Key': KEY }, timeout: 5000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer to ${path} within 5 s`)));
    req.on('error', reject);
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Cluster mode (WEB_CONCURRENCY, src/primary/primary.ts), the server started as `npm start` does:
 * two workers share the port, one runs the vector pipeline, metrics are the cluster's, a
 * dead worker is replaced, SIGTERM stops everything.
 */
describe('cluster mode (WEB_CONCURRENCY=2)', () => {
  let db: TestDatabase;
  let server: ServerProcess;
  const dataDir = mkdtempSync(join(tmpdir(), 'agent-data-cluster-'));
  const announcement = (): { pid: number; url: string; local_token: string } | undefined => {
    try {
      return JSON.parse(readFileSync(join(dataDir, 'server.json'), 'utf8'));
    } catch {
      return undefined;
    }
  };
  let baseUrl: string;
  const logs = (): LogLine[] =>
    server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);
  const workers = (role: 'vector' | 'web') =>
    logs()
      .filter((l) => l.msg.startsWith('listening on') && l.msg.includes(`${role} worker`))
      .map((l) => l.pid);

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await getRandomPort('127.0.0.1');
    baseUrl = `http://127.0.0.1:${port}`;
    server = startServer({
      WEB_CONCURRENCY: '2',
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      API_KEYS: `ops:${KEY}:admin,internal;reader:${READER_KEY}:admin,internal`,
      ACCESS_POLICY: JSON.stringify(POLICY),
    });
    await waitFor(
      async () => {
        if (server.child.exitCode !== null) throw new Error(`exited:\n${server.stderr()}`);
        return workers('vector').length === 1 && workers('web').length === 1;
      },
      'both workers to listen',
      60_000,
    );
  }, 90_000);
  afterAll(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
    for (const pid of [...workers('vector'), ...workers('web')]) {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers from both workers and reports the metrics of the whole cluster', async () => {
    const [vector] = workers('vector');
    const [web] = workers('web');
    expect(vector).not.toBe(web);
    expect(vector).not.toBe(server.child.pid);
    for (let i = 0; i < 20; i++) expect(await getOnce(baseUrl, '/health/live')).toBe(200);
    const metrics = await request(baseUrl).get('/metrics').set('X-API-Key', KEY).expect(200);
    // Each worker saw part of the 20 requests: the scrape sums them.
    expect(metrics.text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/health\/live",status="200"\} 20\n/,
    );
    // One worker listens for vector work: its 1 is not hidden by the other's 0.
    expect(metrics.text).toMatch(/\nvector_sync_listener_up 1\n/);
    expect(metrics.text).not.toMatch(/metrics_scrape_errors_total\{collector="cluster"\}/);
  });

  it('runs the vector pipeline in one worker: a document written through either becomes ready', async () => {
    for (let i = 0; i < 4; i++) {
      await request(baseUrl)
        .post('/documents')
        .set('X-API-Key', KEY)
        .set('Connection', 'close')
        .send({ document_id: `cluster/doc-${i}.md`, body: `# Doc ${i}\n\nWritten to a cluster.` })
        .expect(201);
    }
    await waitFor(async () => {
      const list = await Promise.all(
        [0, 1, 2, 3].map((i) =>
          request(baseUrl).get(`/documents/cluster/doc-${i}.md`).set('X-API-Key', KEY),
        ),
      );
      return list.every((r) => r.body.vector_status === 'ready');
    }, 'the documents to be embedded');
    // Whichever worker is asked, the status is the vector worker's: it runs the pipeline.
    for (let i = 0; i < 6; i++) {
      const status = await request(baseUrl)
        .get('/admin/vectors/status')
        .set('X-API-Key', KEY)
        .set('Connection', 'close')
        .expect(200);
      expect(status.body).toMatchObject({
        cluster_role: 'vector',
        counts: { ready: 4 },
        worker: { running: true },
      });
    }
  });

  it('searches in the vector worker alone, for every worker, under the caller access', async () => {
    for (const id of ['open/found.md', 'closed/hidden.md']) {
      await request(baseUrl)
        .post('/documents')
        .set('X-API-Key', KEY)
        .set('Connection', 'close')
        .send({ document_id: id, body: `# ${id}\n\nThe ${WORD} is searched through the cluster.` })
        .expect(201);
    }
    const search = (key: string) =>
      request(baseUrl)
        .get('/search')
        .query({ query: WORD })
        .set('X-API-Key', key)
        .set('Connection', 'close')
        .expect(200);
    await waitFor(
      async () => (await search(KEY)).body.results.length === 2,
      'both documents to be found',
    );
    // Connections go to the workers in turn: six requests reach both.
    for (let i = 0; i < 6; i++) {
      const ids = (answer: request.Response) =>
        answer.body.results.map((r: { document_id: string }) => r.document_id).sort();
      expect(ids(await search(KEY))).toEqual(['closed/hidden.md', 'open/found.md']);
      expect(ids(await search(READER_KEY))).toEqual(['open/found.md']);
    }
    // The web worker holds no copy of the index: only the vector worker loaded one.
    const loaded = logs().filter((l) => /loaded the lexical index/.test(l.msg));
    expect(new Set(loaded.map((l) => l.pid))).toEqual(new Set(workers('vector')));
  });

  it('replaces a worker that dies, and keeps answering meanwhile', async () => {
    const [web] = workers('web');
    process.kill(web, 'SIGKILL');
    // Once the primary knows (a connection handed over at the very instant of the death is
    // lost with the worker: node:cluster's round-robin limit, see docs/operations.md), the other worker
    // answers everything while the replacement starts.
    await waitFor(
      async () => logs().some((l) => l.msg.startsWith(`web worker ${web} exited (SIGKILL)`)),
      'the primary to see the worker die',
    );
    for (let i = 0; i < 4; i++) expect(await getOnce(baseUrl, '/health/live')).toBe(200);
    // A scrape meanwhile asks the workers that listen, without waiting for the new one.
    const scrape = await request(baseUrl).get('/metrics').set('X-API-Key', KEY).expect(200);
    expect(scrape.text).not.toMatch(/metrics_scrape_errors_total\{collector="cluster"\}/);
    await waitFor(async () => workers('web').length === 2, 'a new web worker', 25_000);
    const [, replacement] = workers('web');
    expect(replacement).not.toBe(web);
    expect(await getOnce(baseUrl, '/health/ready')).toBe(200);
  });

  it('answers a search 503 with Retry-After while the vector worker restarts', async () => {
    const [vector] = workers('vector');
    process.kill(vector, 'SIGKILL');
    await waitFor(
      async () => logs().some((l) => l.msg.startsWith(`vector worker ${vector} exited (SIGKILL)`)),
      'the primary to see the vector worker die',
    );
    const during = await request(baseUrl)
      .get('/search')
      .query({ query: WORD })
      .set('X-API-Key', KEY)
      .set('Connection', 'close');
    expect(during.status).toBe(503);
    expect(during.headers['retry-after']).toBe('5');
    expect(during.body.error).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/search process of this server is restarting/),
    });
    await waitFor(async () => workers('vector').length === 2, 'a new vector worker', 25_000);
    await waitFor(async () => {
      const after = await request(baseUrl)
        .get('/search')
        .query({ query: WORD })
        .set('X-API-Key', KEY)
        .set('Connection', 'close');
      return after.status === 200 && after.body.results.length === 2;
    }, 'searches to work again');
  });

  it('announces the cluster once, as its primary, for agent-data mcp on its DATA_DIR', async () => {
    const announced = await waitFor(() => announcement(), 'the announcement');
    expect(announced).toMatchObject({ pid: server.child.pid, url: baseUrl });
    // Every worker knows the agents the primary announced to: under this cluster's access
    // policy they are told to give a key (with a token no worker knew, the answer would
    // be that credentials are missing).
    for (let i = 0; i < 4; i++) {
      const answer = await request(baseUrl)
        .post('/mcp')
        .set('x-agent-data-local', announced.local_token)
        .set('Connection', 'close')
        .send({ jsonrpc: '2.0', id: i, method: 'ping' })
        .expect(401);
      expect(answer.text).toContain('an access policy is configured');
    }
    const stranger = await request(baseUrl)
      .post('/mcp')
      .set('x-agent-data-local', 'not-the-announced-token')
      .send({ jsonrpc: '2.0', id: 9, method: 'ping' })
      .expect(401);
    expect(stranger.text).not.toContain('an access policy is configured');
  });

  it('stops every worker on SIGTERM and exits 0', async () => {
    const pids = [...workers('vector'), ...workers('web')];
    server.child.kill('SIGTERM');
    expect(await server.exit).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
    expect(logs().some((l) => l.msg.startsWith('SIGTERM received: stopping'))).toBe(true);
    expect(announcement()).toBeUndefined();
  });
});
