import { getRandomPort } from 'get-port-please';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { live, ServerProcess, startServer } from './server-process-helpers';
import { waitFor } from './support/wait';

/**
 * No DATABASE_URL: the server starts its own PostgreSQL under DATA_DIR, stops it on SIGTERM
 * (and on SIGHUP, a closed terminal, unless it reads a file again on it), and finds its
 * documents again on the next start.
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
    // A server that ended without stopping its PostgreSQL (a failed test) leaves none behind.
    const pid = join(dataDir, 'pg', 'postmaster.pid');
    if (existsSync(pid)) process.kill(Number(readFileSync(pid, 'utf8').split('\n')[0]), 'SIGINT');
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(env: Record<string, string> = {}): Promise<string> {
    const port = await getRandomPort('127.0.0.1');
    server = startServer({
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      VECTOR_SYNC_ENABLED: 'false',
      ...env,
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

  it('stops its PostgreSQL when its terminal closes (SIGHUP), as on SIGTERM', async () => {
    await start();
    server!.child.kill('SIGHUP');
    expect(await server!.exit).toBe(0);
    expect(server!.stderr()).toBe('');
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, 90_000);

  it('stops its PostgreSQL on a Ctrl-C that comes twice (npm start passes it on)', async () => {
    await start({ LOG_LEVEL: 'info' });
    server!.child.kill('SIGINT');
    // The second once the first is being handled (two at once would arrive as one).
    await waitFor(
      () => server!.stdout().includes('SIGINT received: draining requests'),
      'the first Ctrl-C to be heard',
    );
    server!.child.kill('SIGINT');
    expect(await server!.exit).toBe(0);
    expect(server!.stdout()).toContain('embedded PostgreSQL stopped');
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, 90_000);

  it('reads its access policy file again on SIGHUP, and goes on serving', async () => {
    const policy = join(dataDir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ rules: [{ who: ['*'], read: '*', write: '*' }] }));
    const url = await start({ ACCESS_POLICY_FILE: policy, LOG_LEVEL: 'info' });
    server!.child.kill('SIGHUP');
    await waitFor(
      () => server!.stdout().includes('access policy read again after SIGHUP'),
      'the policy to be read again',
    );
    // Not shutting down: readiness would answer 503 from the signal on.
    await request(url).get('/health/ready').expect(200);
    await request(url)
      .post('/documents')
      .send({ document_id: 'after/hangup.md', body: 'still serving' })
      .expect(201);
    await stop();
  }, 90_000);
});
