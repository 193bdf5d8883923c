import { request as httpRequest } from 'node:http';
import { createTestDatabase, TestDatabase } from '../support/database';
import { FakeOpenAi } from '../support/fake-openai';
import { freePort } from '../server-process-helpers';
import { NodeProcess, runEntryPoint, waitUntilServing } from './node-process';

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
    const port = await freePort();
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
    for (let i = 0; i < 600; i++) {
      if (server.output().includes('SIGTERM received')) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the server never logged the SIGTERM:\n${server.output()}`);
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
      while (acknowledged.length < 60 || (await claims()) === 0) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
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
