import { getRandomPort } from 'get-port-please';
import { Agent, request as httpRequest } from 'node:http';
import { createTestDatabase, TestDatabase } from '../support/database';
import { FakeOpenAi } from '../support/fake-openai';
import { NodeProcess, runEntryPoint, waitUntilServing } from './node-process';
import { waitFor } from '../support/wait';

jest.setTimeout(120_000);

/**
 * SIGTERM to the real server process (src/main.ts, as the image runs it): it stops
 * accepting connections, finishes what is in flight (bounded by SHUTDOWN_TIMEOUT_MS), lets
 * the vector worker finish or release its claims, closes the pool and exits 0. Stopping the
 * embedded PostgreSQL on SIGTERM is covered by test/embedded-restart.e2e-spec.ts.
 */
describe('graceful shutdown of the server process', () => {
  let db: TestDatabase;
  const servers: NodeProcess[] = [];

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    // A failed test may leave its server running (and with it an embedded PostgreSQL).
    await Promise.all(servers.splice(0).map(stopIfRunning));
    await db.drop();
  });

  async function startServer(env: Record<string, string> = {}) {
    const port = await getRandomPort('127.0.0.1');
    const server = runEntryPoint('main.ts', {
      DATABASE_URL: db.url,
      MIGRATIONS_RUN: 'false',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      ...env,
    });
    servers.push(server);
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitUntilServing(`${baseUrl}/health/ready`, server);
    return { server, baseUrl, port };
  }

  /** Resolves once the process has logged that it started draining. */
  async function draining(server: NodeProcess): Promise<void> {
    await waitFor(() => server.output().includes('SIGTERM received'), 'the SIGTERM log line', {
      timeoutMs: 30_000,
      intervalMs: 50,
    }).catch((error: Error) => {
      throw new Error(`${error.message}:\n${server.output()}`);
    });
  }

  async function storedIds(ids: string[]): Promise<Set<string>> {
    const client = await db.client();
    const result = await client.query<{ document_id: string }>(
      'SELECT document_id FROM kb_documents WHERE document_id = ANY($1)',
      [ids],
    );
    return new Set(result.rows.map((row) => row.document_id));
  }

  it('keeps every acknowledged write of a stream cut by SIGTERM, releases the worker claims, exits 0', async () => {
    // An embeddings server that never answers for these documents: at SIGTERM the vector
    // worker is certainly holding claimed documents, which it must give back.
    const embeddings = await new FakeOpenAi(64).start();
    embeddings.holdWhen((request) => request.input.some((text) => text.includes('shutting down')));
    try {
      const { server, baseUrl } = await startServer({
        EMBEDDINGS_PROVIDER: 'openai',
        OPENAI_BASE_URL: embeddings.url,
        OPENAI_API_KEY: 'sk-test-shutdown',
        EMBEDDINGS_DIMENSIONS: '64',
      });
      const acknowledged: string[] = [];
      const otherAnswers: string[] = [];
      let sigtermSent = false;

      // Each writer posts documents one after another until the server stops answering.
      const writer = async (name: string) => {
        for (let i = 0; ; i++) {
          const documentId = `shutdown/${name}/doc-${i}.md`;
          let response: Response;
          try {
            response = await fetch(`${baseUrl}/documents`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                document_id: documentId,
                body: `# ${name} ${i}\n\nA paragraph about shutting down while writing.`,
              }),
            });
          } catch (error) {
            // Refused or reset: the server is gone. Only acceptable once SIGTERM was sent.
            if (!sigtermSent) throw error;
            return;
          }
          await response.arrayBuffer();
          if (response.status === 201) acknowledged.push(documentId);
          else otherAnswers.push(`${documentId}: ${response.status}`);
        }
      };
      const writers = Array.from({ length: 8 }, (_, i) => writer(`w${i}`));

      const client = await db.client();
      const claims = async () =>
        (
          await client.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM kb_documents
              WHERE vector_claimed_at IS NOT NULL OR vector_lease_expires_at IS NOT NULL`,
          )
        ).rows[0].n;
      await waitFor(
        async () => acknowledged.length >= 60 && (await claims()) > 0,
        '60 acknowledged writes and documents claimed by the worker',
        { intervalMs: 20 },
      );
      const acknowledgedBeforeSignal = acknowledged.length;
      sigtermSent = true;
      server.child.kill('SIGTERM');

      await Promise.all(writers);
      expect({ code: await server.exited, output: server.output() }).toMatchObject({ code: 0 });
      expect(server.output()).toContain('stopped');
      // Drained on its own: no connection had to be cut at SHUTDOWN_TIMEOUT_MS.
      expect(server.output()).not.toMatch(/still running after/);
      expect(otherAnswers).toEqual([]);
      expect(acknowledged.length).toBeGreaterThanOrEqual(acknowledgedBeforeSignal);

      const stored = await storedIds(acknowledged);
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      expect(await claims()).toBe(0);
      // Given back as pending work, for the next process to embed.
      const statuses = await client.query<{ vector_status: string }>(
        `SELECT DISTINCT vector_status FROM kb_documents WHERE document_id = ANY($1)`,
        [acknowledged],
      );
      expect(statuses.rows).toEqual([{ vector_status: 'pending' }]);
    } finally {
      await embeddings.close();
    }
  });

  it('keeps kept-alive clients answered through the drain: Connection: close, never a reset', async () => {
    const { server, port } = await startServer({ SHUTDOWN_DRAIN_MS: '3000' });
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const get = (path: string) =>
      new Promise<{ status: number; connection?: string; reused: boolean }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, agent }, (response) => {
          response.resume();
          response.on('end', () =>
            resolve({
              status: response.statusCode!,
              connection: response.headers.connection,
              reused: req.reusedSocket,
            }),
          );
        });
        req.on('error', reject);
        req.end();
      });
    try {
      // Four connections open and idle in the agent's pool.
      const warm = await Promise.all([1, 2, 3, 4].map(() => get('/health/live')));
      expect(warm.map((r) => r.status)).toEqual([200, 200, 200, 200]);

      server.child.kill('SIGTERM');
      await draining(server);
      const during = await Promise.all([1, 2, 3, 4].map(() => get('/documents?limit=1')));
      const ready = await get('/health/ready');

      // Each kept-alive connection serves one more answer, which tells the client it ends.
      expect(during).toEqual(
        [1, 2, 3, 4].map(() => ({ status: 200, connection: 'close', reused: true })),
      );
      expect(ready).toMatchObject({ status: 503, connection: 'close' });
      expect(await server.exited).toBe(0);
    } finally {
      agent.destroy();
    }
  });

  it('a process killed mid-batch: another one takes its documents over once their leases expire', async () => {
    const embeddings = await new FakeOpenAi(64).start();
    embeddings.holdWhen(() => true);
    const env = {
      EMBEDDINGS_PROVIDER: 'openai',
      OPENAI_BASE_URL: embeddings.url,
      OPENAI_API_KEY: 'sk-test-kill',
      EMBEDDINGS_DIMENSIONS: '64',
      VECTOR_LEASE_MS: '2000',
    };
    const client = await db.client();
    try {
      const first = await startServer(env);
      const ids = Array.from({ length: 12 }, (_, i) => `killed/doc-${i}.md`);
      for (const id of ids) {
        const response = await fetch(`${first.baseUrl}/documents`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ document_id: id, body: `# ${id}\n\nEmbedded by someone.` }),
        });
        expect(response.status).toBe(201);
      }
      await embeddings.waitForHeld();
      const leased = async () =>
        (
          await client.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM kb_documents
              WHERE document_id = ANY($1) AND vector_lease_id IS NOT NULL`,
            [ids],
          )
        ).rows[0].n;
      expect(await leased()).toBeGreaterThan(0);

      first.server.child.kill('SIGKILL');
      expect(await first.server.exited).toBe('SIGKILL');
      // Its leases outlive it, by at most VECTOR_LEASE_MS.
      expect(await leased()).toBeGreaterThan(0);

      embeddings.release();
      const second = await startServer(env);
      const statuses = async () =>
        (
          await client.query<{ vector_status: string; vector_attempts: number; n: number }>(
            `SELECT vector_status, vector_attempts, count(*)::int AS n FROM kb_documents
              WHERE document_id = ANY($1) GROUP BY 1, 2`,
            [ids],
          )
        ).rows;
      await waitFor(
        async () => {
          const rows = await statuses();
          return rows.length === 1 && rows[0].vector_status === 'ready';
        },
        'every document ready after the takeover',
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      // All embedded by the second process, none charged an attempt for the death of the first.
      expect(await statuses()).toEqual([{ vector_status: 'ready', vector_attempts: 0, n: 12 }]);
      second.server.child.kill('SIGTERM');
      expect(await second.server.exited).toBe(0);
    } finally {
      await embeddings.close();
    }
  });

  it('answers a request that was in flight when SIGTERM arrived', async () => {
    const { server, port } = await startServer();
    const body = JSON.stringify({ document_id: 'shutdown/in-flight.md', body: 'still written' });
    let continued!: () => void;
    const serverHasHeaders = new Promise<void>((resolve) => (continued = resolve));
    const answer = new Promise<{ status: number; connection?: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/documents',
          // The server answers 100 Continue once it has parsed the headers: from then on the
          // request is in the application, waiting for its body.
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            expect: '100-continue',
          },
        },
        (response) => {
          response.resume();
          response.on('end', () =>
            resolve({ status: response.statusCode!, connection: response.headers.connection }),
          );
        },
      );
      req.on('continue', () => continued());
      req.on('error', reject);
      void serverHasHeaders
        .then(async () => {
          server.child.kill('SIGTERM');
          await draining(server);
          req.end(body);
        })
        .catch(reject);
      req.flushHeaders();
    });

    // `close`: a keep-alive connection would go on serving and hold the shutdown open.
    await expect(answer).resolves.toEqual({ status: 201, connection: 'close' });
    expect(await server.exited).toBe(0);
    expect(server.output()).not.toMatch(/still running after/);
    expect(await storedIds(['shutdown/in-flight.md'])).toEqual(new Set(['shutdown/in-flight.md']));
  });

  it('cuts a request that outlives SHUTDOWN_TIMEOUT_MS and still exits 0', async () => {
    const { server, port } = await startServer({ SHUTDOWN_TIMEOUT_MS: '500' });
    const cut = new Promise<string>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/documents',
        headers: {
          'content-type': 'application/json',
          'content-length': 1000,
          expect: '100-continue',
        },
      });
      req.on('continue', () => server.child.kill('SIGTERM')); // and the body never comes
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      req.on('response', (response) => resolve(`answered ${response.statusCode}`));
      req.flushHeaders();
    });

    await expect(cut).resolves.toMatch(/ECONNRESET|socket hang up/);
    expect(await server.exited).toBe(0);
    expect(server.output()).toMatch(/still running after 500 ms/);
  });
});

async function stopIfRunning(server: NodeProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
  await server.exited;
  clearTimeout(timer);
}
