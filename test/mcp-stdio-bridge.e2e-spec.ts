import { getRandomPort } from 'get-port-please';
import { once } from 'node:events';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { resultJson } from './support/mcp-sdk';
import { page, startPageServer, type PageServer } from './support/mcp-page-server';
import {
  env,
  META,
  newDataDir,
  postmasters,
  RawStdio,
  searchUntilFound,
  v1Client,
  v2Client,
} from './support/mcp-stdio';
import { waitFor } from './support/wait';
import { live, type ServerProcess, startServer } from './server-process-helpers';

const RECORD_MODULES = ['-r', join(__dirname, 'support', 'record-modules.js')];
/** What the relaying process must never load: the application, the database, the model. */
const HEAVY = /node_modules\/(@nestjs|typeorm|pg|onnxruntime-node|onnxruntime-common)\//;

const KEY = 'bridge-reader-0123456789abcdef';
const ADMIN = 'bridge-admin-0123456789abcdef0';
/** Keys, and a policy that keeps the reader to team-b/. */
const SECURED = {
  API_KEYS: `reader:${KEY}:internal;ops:${ADMIN}:admin`,
  ACCESS_POLICY: JSON.stringify({
    rules: [
      { who: ['key:reader'], read: ['team-b/'], write: ['team-b/'] },
      { who: ['key:ops'], read: ['*'], write: ['*'] },
    ],
  }),
  SHUTDOWN_DRAIN_MS: '0',
  SHUTDOWN_TIMEOUT_MS: '1000',
};

interface RunningServer {
  process: ServerProcess;
  baseUrl: string;
}

async function serve(
  dir: string,
  extra: Record<string, string> = {},
  port?: number,
): Promise<RunningServer> {
  port ??= await getRandomPort('127.0.0.1');
  const child = startServer(env(dir, { PORT: String(port), LOG_LEVEL: 'info', ...extra }));
  const baseUrl = `http://127.0.0.1:${port}`;
  await live(child, baseUrl);
  // It announces itself just after it listens.
  await waitFor(() => readAnnouncement(dir)?.pid === child.child.pid, 'the announcement');
  return { process: child, baseUrl };
}

async function stop(server: RunningServer | undefined): Promise<void> {
  if (server === undefined || server.process.child.exitCode !== null) return;
  server.process.child.kill('SIGTERM');
  await server.process.exit;
}

function readAnnouncement(dir: string): { pid: number; url: string } | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

/** PIDs registered as users of the embedded cluster of `dir`: the processes that opened it. */
function clusterUsers(dir: string): string[] {
  return readdirSync(join(dir, 'pg-users')).sort();
}

/**
 * `agent-data mcp` with a server running on its DATA_DIR (docs/cli.md): the command relays
 * to the server's HTTP endpoint instead of building an application. Real server processes,
 * the official SDK clients over stdio, and the raw stream for what a library never sends.
 */
describe('agent-data mcp through the server on its DATA_DIR', () => {
  jest.setTimeout(120_000);
  const dir = newDataDir();
  let server: RunningServer | undefined;
  let pages: PageServer;
  const hangClosed: string[] = [];

  beforeAll(async () => {
    pages = await startPageServer({
      // Never answers; notes when the server gives up the fetch (a cancelled ingest).
      '/hang.html': (req) => req.socket.once('close', () => hangClosed.push(req.url ?? '')),
      '/ok.html': page('text/html', '<html><body><h1>Ok</h1><p>Harbour notes.</p></body></html>'),
    });
    server = await serve(dir, {
      VECTOR_SYNC_ENABLED: 'true',
      INGEST_ALLOWED_HOSTS: '127.0.0.1',
      INGEST_ALLOW_HTTP: 'true',
      INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
      SHUTDOWN_DRAIN_MS: '0',
      SHUTDOWN_TIMEOUT_MS: '1000',
    });
  });
  afterAll(async () => {
    await stop(server);
    await pages.close();
    await waitFor(() => postmasters(dir).length === 0, 'the cluster to stop');
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts on a new DATA_DIR without a warning: creating the cluster is information', () => {
    const lines = server!.process
      .stdout()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    const listening = lines.findIndex((line) => line.msg?.startsWith('listening on'));
    expect(listening).toBeGreaterThan(0);
    const start = lines.slice(0, listening);
    expect(
      start.find((line) => line.msg?.startsWith('creating a new embedded PostgreSQL cluster')),
    ).toMatchObject({ level: 30 });
    expect(start.filter((line) => line.level >= 40)).toEqual([]);
  });

  it('announces the server in DATA_DIR/server.json, readable by its owner only', () => {
    const file = join(dir, 'server.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readAnnouncement(dir)).toMatchObject({
      pid: server!.process.child.pid,
      url: server!.baseUrl,
    });
  });

  it('serves the v1 and v2 SDK clients through the server, which alone opened the database', async () => {
    const v1 = await v1Client(dir);
    const v2 = await v2Client(dir, { pin: '2026-07-28' });
    try {
      expect(clusterUsers(dir)).toEqual([String(server!.process.child.pid)]);
      expect((await v1.listTools()).tools).toHaveLength(11);
      expect(v2.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect((await v2.listTools()).tools).toHaveLength(11);
      await v1.callTool({
        name: 'upload_document',
        arguments: { document_id: 'bridge/v1.md', content: 'The boatswain coils the hawser.' },
      });
      await v2.callTool({
        name: 'upload_document',
        arguments: { document_id: 'bridge/v2.md', content: 'The purser counts the doubloons.' },
      });
      expect((await searchUntilFound(v2, 'boatswain hawser', 'bridge/v1.md'))[0].document_id).toBe(
        'bridge/v1.md',
      );
      expect((await searchUntilFound(v1, 'purser doubloons', 'bridge/v2.md'))[0].document_id).toBe(
        'bridge/v2.md',
      );

      await request(server!.baseUrl)
        .post('/documents')
        .send({ document_id: 'bridge/rest.md', body: '# REST\n\nThe lamplighter.' })
        .expect(201);
      const read = await v1.callTool({
        name: 'get_document',
        arguments: { document_id: 'bridge/rest.md' },
      });
      expect(resultJson(read)).toMatchObject({ body: expect.stringContaining('lamplighter') });
      expect(clusterUsers(dir)).toEqual([String(server!.process.child.pid)]);
    } finally {
      await Promise.all([v1.close(), v2.close()]);
    }
  });

  it('relays a listen: change notifications arrive through the server as they happen', async () => {
    const v2 = await v2Client(dir, { pin: '2026-07-28' });
    const heard: string[] = [];
    v2.setNotificationHandler('notifications/resources/updated', (notification) => {
      heard.push(`updated ${notification.params.uri}`);
    });
    try {
      const subscription = await v2.listen({ resourceSubscriptions: ['kb://bridge/listened/'] });
      expect(subscription.honoredFilter).toEqual({
        resourceSubscriptions: ['kb://bridge/listened/'],
      });
      await request(server!.baseUrl)
        .post('/documents')
        .send({ document_id: 'bridge/listened/a.md', body: 'The helmsman.' })
        .expect(201);
      await waitFor(
        () => heard.includes('updated kb://bridge/listened/a.md'),
        'the change to come through the relay',
        { timeoutMs: 10_000, intervalMs: 50 },
      );
    } finally {
      await v2.close();
    }
  });

  it('relays progress before the result and cancellation, writes only JSON-RPC on stdout, and loads no application', async () => {
    const modules = join(dir, 'modules.txt');
    const raw = new RawStdio(
      [],
      env(dir, { LOG_LEVEL: 'debug', MAX_REQUEST_BYTES: '4096', RECORD_MODULES_TO: modules }),
      RECORD_MODULES,
    );
    const ingest = (id: number, path: string, meta: object) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'ingest_document',
        arguments: { url: `${pages.url}${path}`, document_id: `ingested/${id}.md` },
        _meta: meta,
      },
    });
    raw.send(
      'not json',
      { jsonrpc: '2.0', id: 'big', method: 'tools/list', params: { pad: 'x'.repeat(10_000) } },
      ingest(1, '/ok.html', { progressToken: 'p1' }),
      ingest(2, '/hang.html', { ...META, progressToken: 'p2' }),
      [
        { jsonrpc: '2.0', id: 3, method: 'ping' },
        { jsonrpc: '2.0', id: 4, method: 'tools/list' },
      ],
    );
    expect((await raw.answer(null)).error).toMatchObject({ code: -32700 });
    await waitFor(
      () =>
        raw.messages.find(
          (m) => m.id === null && JSON.stringify(m.error).includes('over the limit of 4096 bytes'),
        ),
      'the oversized line refused here',
    );
    const done = await raw.answer(1);
    expect(JSON.stringify(done.result)).toContain('ingested/1.md');
    const progressOf = (token: string) =>
      raw.messages.filter(
        (m) =>
          m.method === 'notifications/progress' &&
          (m.params as { progressToken: string }).progressToken === token,
      );
    expect(progressOf('p1').map((m) => (m.params as { progress: number }).progress)).toEqual([
      0, 1, 2, 3,
    ]);
    expect(raw.messages.indexOf(progressOf('p1')[3])).toBeLessThan(raw.messages.indexOf(done));
    const batch = await waitFor(
      () => raw.messages.find((m) => Array.isArray(m)) as unknown as Array<{ id: number }>,
      'the batch answer',
    );
    expect(batch.map((m) => m.id)).toEqual([3, 4]);

    // The hanging 2026-era ingest reported that it started; cancelling it closes its POST,
    // which cancels it on the server (its fetch is abandoned), and its answer never comes.
    await waitFor(() => progressOf('p2').length === 1, 'the hanging ingest to start');
    raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
    await waitFor(() => hangClosed.length === 1, 'the server to abandon the hanging fetch');
    raw.send({ jsonrpc: '2.0', id: 5, method: 'ping' });
    expect(await raw.answer(5)).toMatchObject({ result: {} });

    expect(await raw.end()).toBe(0);
    expect(raw.messages.some((m) => m.id === 2 || m.id === 'big')).toBe(false);
    expect(raw.unparsable).toEqual([]);
    expect(raw.stderr).toMatch(
      /"msg":"relaying MCP to the Agent Data server at http:\/\/127\.0\.0\.1:/,
    );
    const loaded = readFileSync(modules, 'utf8').split('\n');
    expect(loaded.filter((file) => HEAVY.test(file))).toEqual([]);
    expect(loaded.some((file) => file.endsWith('mcp-relay.ts'))).toBe(true);
  });

  // It stops the server and starts it again with API keys and an access policy, which the
  // last test uses.
  it('answers -32603 while the server is away, and goes through it again once it is back', async () => {
    // Ignored while authentication is off; the server started again checks it.
    const raw = new RawStdio([], env(dir, { AGENT_DATA_API_KEY: KEY }));
    raw.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await raw.answer(1);
    // A 2025-era call keeps running when its client disconnects: the server's shutdown cuts it.
    const hits = pages.hits.length;
    raw.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'ingest_document',
        arguments: { url: `${pages.url}/hang.html`, document_id: 'cut.md' },
      },
    });
    await waitFor(() => pages.hits.length > hits, 'the ingest to fetch the page');
    await stop(server);
    const cut = await raw.answer(2);
    expect(cut.error).toMatchObject({ code: -32603 });
    expect((cut.error as { message: string }).message).toMatch(
      /^Internal error: the Agent Data server at http:\/\/127\.0\.0\.1:\d+ (stopped answering|did not answer)/,
    );
    raw.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    expect((await raw.answer(3)).error).toMatchObject({
      code: -32603,
      message: expect.stringContaining(`no Agent Data server answers on DATA_DIR ${dir}`),
    });

    // On the same port, as a server restarted by hand would be.
    server = await serve(dir, SECURED, Number(new URL(server!.baseUrl).port));
    raw.send({ jsonrpc: '2.0', id: 4, method: 'tools/list' });
    const listed = await raw.answer(4);
    expect((listed.result as { tools: unknown[] }).tools).toHaveLength(11);
    expect(raw.child.exitCode).toBeNull();
    expect(await raw.end()).toBe(0);
    expect(raw.unparsable).toEqual([]);
  });

  it('shows a key only its folders through the server, and refuses an agent without a key in one line', async () => {
    await request(server!.baseUrl)
      .post('/documents')
      .set('X-API-Key', ADMIN)
      .send({ document_id: 'team-a/secret.md', body: 'zanzibar plans' })
      .expect(201);
    // The agent's own environment has no policy: the server's decides.
    const client = await v1Client(dir, [], { AGENT_DATA_API_KEY: KEY });
    try {
      const hidden = await client.callTool({
        name: 'get_document',
        arguments: { document_id: 'team-a/secret.md' },
      });
      expect(JSON.stringify(hidden)).toMatch(/NOT_FOUND/);
      await client.callTool({
        name: 'upload_document',
        arguments: { document_id: 'team-b/open.md', content: 'open plans' },
      });
      const listed = JSON.stringify(
        resultJson(await client.callTool({ name: 'list_documents', arguments: { prefix: '' } })),
      );
      expect(listed).toContain('team-b/open.md');
      expect(listed).not.toContain('team-a');
    } finally {
      await client.close();
    }

    const noKey = new RawStdio([], env(dir));
    const wrong = new RawStdio([], env(dir, { AGENT_DATA_API_KEY: 'not-a-key-0000000000' }));
    // Both listened for now: either may exit first.
    const exits = [once(noKey.child, 'exit'), once(wrong.child, 'exit')];
    expect(await exits[0]).toEqual([1, null]);
    expect(noKey.stderr.trim().split('\n')).toEqual([
      'agent-data: an access policy is configured: give the API key whose folders this agent may use (AGENT_DATA_API_KEY or --api-key-file)',
    ]);
    expect(noKey.messages).toEqual([]);
    expect(await exits[1]).toEqual([1, null]);
    expect(wrong.stderr).toMatch(/^agent-data: the API key is not one of API_KEYS\n$/);
    expect(clusterUsers(dir)).toEqual([String(server!.process.child.pid)]);
  });
});
