import { getRandomPort } from 'get-port-please';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { live, ServerProcess, startServer } from './server-process-helpers';
import { createTestDatabase, TestDatabase } from './support/database';

const ADMIN_KEY = 'log-test-admin-key-5f2b9c1e7a';
const READER_KEY = 'log-test-reader-key-8d3e6a0b4c';
const WRONG_KEY = 'log-test-wrong-key-1a2b3c4d5e';
const API_KEYS = `ops:${ADMIN_KEY}:admin;reader:${READER_KEY}:readonly`;

describe('the server process', () => {
  describe('with a valid configuration', () => {
    let db: TestDatabase;
    let server: ServerProcess;
    let baseUrl: string;
    let exitCode: number | null;
    /** When the server's first connection to its database began, by PostgreSQL's clock. */
    let firstConnection: number;

    beforeAll(async () => {
      db = await createTestDatabase();
      const port = await getRandomPort('127.0.0.1');
      baseUrl = `http://127.0.0.1:${port}`;
      server = startServer({
        DATABASE_URL: db.url,
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'info',
        API_KEYS,
        VECTOR_SYNC_ENABLED: 'false',
      });
      await live(server, baseUrl);
      const client = await db.client();
      const asked = Date.now();
      const { rows } = await client.query<{ started: Date; now: Date }>(
        `SELECT min(backend_start) AS started, now() FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      // On this machine's clock, should TEST_DATABASE_URL name a server with another.
      const skew = rows[0].now.getTime() - (asked + Date.now()) / 2;
      firstConnection = rows[0].started.getTime() - skew;

      await request(baseUrl)
        .post('/documents')
        .set('X-API-Key', ADMIN_KEY)
        .set('X-Request-Id', 'trace-create-1')
        .send({ document_id: 'logs/doc.md', body: 'hello' })
        .expect(201);
      await request(baseUrl)
        .get('/documents/logs/doc.md')
        .set('Authorization', `Bearer ${ADMIN_KEY}`)
        .expect(200);
      await request(baseUrl).get('/documents').set('X-API-Key', WRONG_KEY).expect(401);
      await request(baseUrl)
        .get('/documents')
        .set('Authorization', `Bearer ${WRONG_KEY}`)
        .expect(401);
      await request(baseUrl).get('/documents').set('X-API-Key', READER_KEY).expect(403);
      await request(baseUrl)
        .put('/documents/logs/doc.md')
        .set('X-API-Key', ADMIN_KEY)
        .set('Content-Type', 'application/json')
        .send('{"body": ')
        .expect(400);
      // The MCP endpoints are answered ahead of Express: the same request id and log line.
      await request(baseUrl)
        .post('/readonly/mcp')
        .set('X-API-Key', READER_KEY)
        .set('X-Request-Id', 'trace-mcp-1')
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
        .expect(200)
        .expect('X-Request-Id', 'trace-mcp-1');
      await request(baseUrl)
        .post('/readonly/mcp')
        .set('X-API-Key', WRONG_KEY)
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
        .expect(401)
        .expect('X-Request-Id', /^[0-9a-f-]{36}$/);

      server.child.kill('SIGTERM');
      exitCode = await server.exit;
    }, 60_000);
    afterAll(async () => {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      await db.drop();
    });

    function logLines(): Array<Record<string, unknown>> {
      return server
        .stdout()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line));
    }

    it('writes each line of the start when it happens, not all at once when it is over', () => {
      const timeOf = (msg: string) => logLines().find((line) => line.msg === msg)?.time as number;
      // Logs held back until the application is built would all carry a time after its first
      // connection to PostgreSQL.
      expect(timeOf('Starting Nest application...')).toBeLessThanOrEqual(firstConnection);
      expect(timeOf('Nest application successfully started')).toBeGreaterThanOrEqual(
        firstConnection - 1,
      );
    });

    it('stops cleanly on SIGTERM', () => {
      expect(exitCode).toBe(0);
    });

    it('writes structured JSON logs, one object per line', () => {
      const lines = logLines();
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).toMatchObject({ level: expect.any(Number) });
      expect(
        lines.some((line) => /listening on http:\/\/127\.0\.0\.1/.test(String(line.msg))),
      ).toBe(true);
    });

    it('logs each request with its request id, the given one when sane', () => {
      const requests = logLines().filter((line) => line.req !== undefined);
      expect(requests.length).toBeGreaterThanOrEqual(6);
      const created = requests.find((line) => (line.req as { id: string }).id === 'trace-create-1');
      expect(created).toMatchObject({
        req: { method: 'POST', url: '/documents' },
        res: { statusCode: 201 },
      });
      for (const line of requests) expect((line.req as { id: string }).id).toBeTruthy();
      const mcp = requests.find((line) => (line.req as { id: string }).id === 'trace-mcp-1');
      expect(mcp).toMatchObject({
        req: { method: 'POST', url: '/readonly/mcp' },
        res: { statusCode: 200 },
        msg: 'request completed',
      });
      expect(
        requests.some(
          (line) => (line.req as { url: string }).url === '/readonly/mcp' && line.level === 40,
        ),
      ).toBe(true);
    });

    it('never writes an API key, valid or not, nor the database password', () => {
      const output = server.stdout() + server.stderr();
      // Empty only when TEST_DATABASE_URL names a server without a password.
      const password = decodeURIComponent(new URL(db.url).password);
      if (password !== '') expect(output).not.toContain(password);
      for (const key of [ADMIN_KEY, READER_KEY, WRONG_KEY]) {
        expect(output).not.toContain(key);
        expect(output).not.toContain(key.slice(-12));
      }
    });

    it('at info, writes requests without their headers, no line per module or route, and no warning on a normal start', () => {
      const lines = logLines();
      const requests = lines.filter((line) => line.req !== undefined);
      for (const line of requests) expect(line.req).not.toHaveProperty('headers');
      // Nest's start-up chatter (some fifty lines) is at debug.
      expect(
        lines.filter((line) =>
          ['InstanceLoader', 'RoutesResolver', 'RouterExplorer'].includes(String(line.context)),
        ),
      ).toEqual([]);
      // The warnings are the refused requests (401, 403, 400), none of the start.
      const started = lines.filter((line) => line.req === undefined);
      expect(started.length).toBeGreaterThan(0);
      expect(started.filter((line) => Number(line.level) >= 40)).toEqual([]);
    });
  });

  describe('refusing to start once the application is being built', () => {
    let db: TestDatabase;
    let modelsDir: string;
    beforeAll(async () => {
      db = await createTestDatabase();
      modelsDir = mkdtempSync(join(tmpdir(), 'agent-data-no-models-'));
    });
    afterAll(async () => {
      await db.drop();
      rmSync(modelsDir, { recursive: true, force: true });
    });

    it.each([
      [
        'a model named that is not installed',
        { EMBEDDINGS_MODEL: 'e5-small-v2' },
        () =>
          `agent-data: failed to start: the model e5-small-v2 is not installed in ${modelsDir}: run \`agent-data models pull e5-small-v2\`, or \`agent-data models add e5-small-v2 PATH\` with its files`,
      ],
      [
        'an access policy that cannot be read',
        { ACCESS_POLICY: '{"rules": [', API_KEYS },
        () => expect.stringMatching(/^agent-data: invalid configuration: ACCESS_POLICY: /),
      ],
    ])(
      'exits 1 with one line for %s, no stack, in the log or on stderr',
      async (_, env, line) => {
        const server = startServer({
          DATABASE_URL: db.url,
          MIGRATIONS_RUN: 'false',
          LOG_LEVEL: 'info',
          MODELS_DIR: modelsDir,
          ...env,
        });
        expect(await server.exit).toBe(1);
        expect(server.stderr().trimEnd().split('\n')).toEqual([line()]);
        expect(server.stdout()).not.toMatch(/ExceptionHandler|\bat \S+ \(/);
        expect(server.stderr()).not.toMatch(/\n\s+at /);
      },
      30_000,
    );
  });

  describe('with a bad configuration', () => {
    it.each([
      [{ PORT: 'eighty' }, 'PORT: must be an integer, got "eighty"'],
      [{ HOST: '0.0.0.0' }, 'HOST: binding to non-loopback address "0.0.0.0" requires API_KEYS'],
      [{ API_KEYS: `ops:${ADMIN_KEY}:superuser` }, 'API_KEYS: key "ops" names unknown profile'],
    ])(
      'exits 1 with one line naming the variable for %j',
      async (env, message) => {
        const server = startServer({ DATABASE_URL: 'postgres://127.0.0.1:1/none', ...env });
        expect(await server.exit).toBe(1);
        const lines = server
          .stderr()
          .split('\n')
          .filter((line) => line !== '');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(`agent-data: invalid configuration: ${message}`);
        expect(server.stdout()).toBe('');
        expect(server.stderr()).not.toContain(ADMIN_KEY);
      },
      30_000,
    );
  });
});
