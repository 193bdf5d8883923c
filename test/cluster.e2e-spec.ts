import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { freePort, ServerProcess, startServer } from './server-process-helpers';
import { createTestDatabase, TestDatabase } from './support/database';
import { waitFor } from './support/wait';

const KEY = 'cluster-test-key-7c1d9e3a5b';

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
 * Cluster mode (WEB_CONCURRENCY, src/cluster.ts), the server started as `npm start` does:
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
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    server = startServer({
      WEB_CONCURRENCY: '2',
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      API_KEYS: `ops:${KEY}:admin,internal`,
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
    const roles = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const status = await request(baseUrl)
        .get('/admin/vectors/status')
        .set('X-API-Key', KEY)
        .set('Connection', 'close')
        .expect(200);
      roles.add(status.body.cluster_role);
    }
    expect([...roles].sort()).toEqual(['vector', 'web']);
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

  it('announces the cluster once, as its primary, for agent-data mcp on its DATA_DIR', async () => {
    const announced = await waitFor(() => announcement(), 'the announcement');
    expect(announced).toMatchObject({ pid: server.child.pid, url: baseUrl });
    // Every worker admits the agents the primary announced to.
    for (let i = 0; i < 4; i++) {
      await request(baseUrl)
        .post('/mcp')
        .set('x-agent-data-local', announced.local_token)
        .send({ jsonrpc: '2.0', id: i, method: 'ping' })
        .expect(200);
    }
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
