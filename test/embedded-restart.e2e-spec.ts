import { getRandomPort } from 'get-port-please';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { live, ServerProcess, startServer } from './server-process-helpers';

/**
 * No DATABASE_URL: the server starts its own PostgreSQL under DATA_DIR, stops it on SIGTERM,
 * and finds its documents again on the next start.
 */
describe('the embedded PostgreSQL', () => {
  let dataDir: string;
  let server: ServerProcess | undefined;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'agent-data-embedded-'));
    // As root PostgreSQL runs as the postgres user, which must reach the cluster below.
    chmodSync(dataDir, 0o755);
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exit;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<string> {
    const port = await getRandomPort('127.0.0.1');
    server = startServer({
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      VECTOR_SYNC_ENABLED: 'false',
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    await live(server, baseUrl);
    return baseUrl;
  }

  async function stop(): Promise<void> {
    server!.child.kill('SIGTERM');
    expect(await server!.exit).toBe(0);
    // The cluster was stopped, not left running behind the process.
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }

  it('keeps documents across a restart', async () => {
    const first = await start();
    expect(existsSync(join(dataDir, 'pg', 'PG_VERSION'))).toBe(true);
    await request(first).get('/health/ready').expect(200);
    await request(first)
      .post('/documents')
      .send({ document_id: 'survives/restart.md', body: 'still here' })
      .expect(201);
    await stop();

    const second = await start();
    const response = await request(second).get('/documents/survives/restart.md').expect(200);
    expect(response.body).toMatchObject({ body: 'still here', revision: 1 });
    await stop();
  }, 90_000);
});
