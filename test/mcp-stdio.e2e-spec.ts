import { getRandomPort } from 'get-port-please';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { resultJson } from './support/mcp-sdk';
import { page, startPageServer, type PageServer } from './support/mcp-page-server';
import {
  env,
  META,
  newDataDir,
  removeTemplate,
  usedDataDir,
  postmasters,
  RawStdio,
  searchUntilFound,
  v1Client,
  v2Client,
  watchdogs,
} from './support/mcp-stdio';
import { WATCH_MS, WATCHDOG_LOG } from '../src/database/embedded-watchdog';
import { waitFor } from './support/wait';
import { live, type ServerProcess, startServer } from './server-process-helpers';

/**
 * `agent-data mcp` (docs/cli.md): MCP over stdio for local agents, driven by the official SDK
 * clients (v1 with the 2025 handshake, v2 probing and pinned to 2026-07-28) and by hand for
 * what a client library never sends. Each test runs its own processes on its own DATA_DIR: a
 * new one where the first start is what is tested, else a copy of a cluster made once.
 */
describe('agent-data mcp over stdio', () => {
  jest.setTimeout(120_000);
  const dataDirs: string[] = [];
  const dataDir = () => {
    const dir = newDataDir();
    dataDirs.push(dir);
    return dir;
  };
  const usedDir = async () => {
    const dir = await usedDataDir();
    dataDirs.push(dir);
    return dir;
  };
  afterAll(async () => {
    await removeTemplate();
    for (const dir of dataDirs) {
      // Nothing left running behind the processes that used it.
      await waitFor(() => postmasters(dir).length === 0, `the cluster of ${dir} to stop`);
      await waitFor(() => watchdogs(dir).length === 0, `the watchdog of ${dir} to end`);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves the 2025 handshake to the v1 SDK client: eleven tools, and search finds what it wrote', async () => {
    const dir = dataDir();
    // A server that was killed left its announcement: the command runs in-process all the same.
    const dead = spawn(process.execPath, ['-e', '']);
    await once(dead, 'exit');
    writeFileSync(
      join(dir, 'server.json'),
      JSON.stringify({
        pid: dead.pid,
        url: `http://127.0.0.1:${await getRandomPort('127.0.0.1')}`,
        version: '0.0.0',
        started_at: new Date().toISOString(),
        database: 'embedded',
        local_token: 'left-behind',
      }),
    );
    const client = await v1Client(dir);
    try {
      const agent = (client.transport as StdioClientTransport).pid;
      expect(readdirSync(join(dir, 'pg-users'))).toEqual([String(agent)]);
      expect(client.getServerVersion()?.name).toBe('agent-data');
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(11);
      const uploaded = await client.callTool({
        name: 'upload_document',
        arguments: {
          document_id: 'notes/stdio.md',
          content: '# Stdio\n\nThe quartermaster keeps the lanterns.',
        },
      });
      expect(uploaded.isError ?? false).toBe(false);
      const hits = await searchUntilFound(client, 'quartermaster lanterns', 'notes/stdio.md');
      expect(hits[0].document_id).toBe('notes/stdio.md');
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toContain('kb://notes/stdio.md');
    } finally {
      await client.close();
    }
    await waitFor(() => postmasters(dir).length === 0, 'the cluster to stop with its last user');
  });

  it('speaks 2026-07-28 to the v2 SDK client, probing and pinned', async () => {
    // Both at once on one DATA_DIR, each finding what it wrote.
    const dir = await usedDir();
    const modes = [
      ['auto', 'auto', 'cartographer harbour'],
      [{ pin: '2026-07-28' }, 'pin', 'navigator lighthouse'],
    ] as const;
    await Promise.all(
      modes.map(async ([mode, name, words]) => {
        const client = await v2Client(dir, mode);
        try {
          expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
          const { tools } = await client.listTools();
          expect(tools).toHaveLength(11);
          await client.callTool({
            name: 'upload_document',
            arguments: {
              document_id: `modern/${name}.md`,
              content: `# Modern\n\nThe ${words}.`,
            },
          });
          const hits = await searchUntilFound(client, words, `modern/${name}.md`);
          expect(hits[0].document_id).toBe(`modern/${name}.md`);
        } finally {
          await client.close();
        }
      }),
    );
  });

  it('serves the profile named by --profile', async () => {
    const client = await v1Client(await usedDir(), ['--profile', 'readonly']);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([
        'search_knowledge',
        'list_documents',
        'get_document',
        'get_document_for_rewrite',
        'batch_read',
        'follow_links',
      ]);
      await expect(
        client.callTool({
          name: 'upload_document',
          arguments: { document_id: 'x.md', content: 'x' },
        }),
      ).rejects.toThrow(/-32601.*not allowed/);
    } finally {
      await client.close();
    }
  });

  describe('on the raw stream', () => {
    let pages: PageServer;
    beforeAll(async () => {
      pages = await startPageServer({
        // Never answers: an ingest of it runs until it is cancelled.
        '/hang.html': () => undefined,
        '/ok.html': page('text/html', '<html><body><h1>Ok</h1></body></html>'),
      });
    });
    afterAll(() => pages.close());

    it('writes only protocol messages on stdout, and answers what a library never sends', async () => {
      const raw = new RawStdio(
        [],
        env(await usedDir(), {
          LOG_LEVEL: 'debug',
          MAX_REQUEST_BYTES: '4096',
          INGEST_ALLOWED_HOSTS: '127.0.0.1',
          INGEST_ALLOW_HTTP: 'true',
          INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
        }),
      );
      raw.send(
        'not json',
        { jsonrpc: '2.0', id: 'big', method: 'tools/list', params: { pad: 'x'.repeat(10_000) } },
        { jsonrpc: '2.0', method: 'tools/list' }, // a notification: no answer
        { jsonrpc: '2.0', id: 1, method: 'nope/nothing' },
        [
          { jsonrpc: '2.0', id: 2, method: 'ping' },
          { jsonrpc: '2.0', id: 3, method: 'tools/list' },
        ],
        {
          jsonrpc: '2.0',
          id: 4,
          method: 'tools/list',
          params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
        },
        {
          jsonrpc: '2.0',
          id: 5,
          method: 'tools/list',
          params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
        },
        { jsonrpc: '2.0', id: 6, method: 'server/discover', params: { _meta: META } },
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: {
            name: 'ingest_document',
            arguments: { url: `${pages.url}/hang.html`, document_id: 'hang.md' },
            _meta: META,
          },
        },
      );
      const parse = await raw.answer(null);
      expect(parse.error).toMatchObject({ code: -32700 });
      await waitFor(
        () =>
          raw.messages.find(
            (m) =>
              m.id === null &&
              (m.error as { code: number; message: string }).code === -32600 &&
              (m.error as { message: string }).message.includes('over the limit of 4096 bytes'),
          ),
        'the oversized line refused',
      );
      expect((await raw.answer(1)).error).toMatchObject({ code: -32601 });
      const batch = await waitFor(
        () => raw.messages.find((m) => Array.isArray(m)) as unknown as Array<{ id: number }>,
        'the batch answer',
      );
      expect(batch.map((m) => m.id)).toEqual([2, 3]);
      expect((await raw.answer(4)).error).toMatchObject({
        code: -32022,
        data: { requested: '2099-01-01' },
      });
      expect((await raw.answer(5)).error).toMatchObject({ code: -32602 });
      expect((await raw.answer(6)).result).toMatchObject({
        supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
      });

      // The hanging ingest is running; cancelling it means its answer never comes, and the
      // stream goes on.
      await waitFor(() => pages.hits.includes('/hang.html'), 'the ingest to fetch the page');
      raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
      raw.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
      expect(await raw.answer(8)).toMatchObject({ result: {} });

      expect(await raw.end()).toBe(0);
      expect(raw.messages.some((m) => m.id === 7)).toBe(false);
      expect(raw.messages.some((m) => m.id === 'big')).toBe(false);
      expect(raw.unparsable).toEqual([]);
      // Logs (debug level here) all went to stderr.
      expect(raw.stderr).toMatch(/"level":20/);
    });
  });

  it('with --standalone, shares the embedded PostgreSQL with a server on the same DATA_DIR, and the last to leave stops it', async () => {
    const dir = await usedDir();
    const port = await getRandomPort('127.0.0.1');
    let server: ServerProcess | undefined = startServer(
      env(dir, { PORT: String(port), VECTOR_SYNC_ENABLED: 'true' }),
    );
    const baseUrl = `http://127.0.0.1:${port}`;
    await live(server, baseUrl);
    await request(baseUrl)
      .post('/documents')
      .send({ document_id: 'shared/from-rest.md', body: '# From REST\n\nThe lighthouse keeper.' })
      .expect(201);

    // In-process beside the server (a bridged agent is tested in mcp-stdio-bridge.e2e-spec.ts).
    const client = await v1Client(dir, ['--standalone']);
    try {
      expect(postmasters(dir)).toHaveLength(1);
      const read = await client.callTool({
        name: 'get_document',
        arguments: { document_id: 'shared/from-rest.md' },
      });
      expect(resultJson(read)).toMatchObject({ body: expect.stringContaining('lighthouse') });
      await client.callTool({
        name: 'upload_document',
        arguments: { document_id: 'shared/from-stdio.md', content: 'written over stdio' },
      });
      await request(baseUrl).get('/documents/shared/from-stdio.md').expect(200);

      // The server stops; the cluster stays for the agent, which goes on working.
      server.child.kill('SIGTERM');
      expect(await server.exit).toBe(0);
      server = undefined;
      expect(postmasters(dir)).toHaveLength(1);
      const listed = resultJson(
        await client.callTool({ name: 'list_documents', arguments: { prefix: 'shared/' } }),
      );
      expect(JSON.stringify(listed)).toContain('shared/from-rest.md');
    } finally {
      await client.close();
      if (server) {
        server.child.kill('SIGTERM');
        await server.exit;
      }
    }
    await waitFor(() => postmasters(dir).length === 0, 'the cluster to stop with its last user');
    expect(existsSync(join(dir, 'pg', 'postmaster.pid'))).toBe(false);
    expect(readdirSync(join(dir, 'pg-users'))).toEqual([]);
  });

  it('starts one PostgreSQL for several agents started at once on a new DATA_DIR', async () => {
    const dir = dataDir();
    const clients = await Promise.all([v1Client(dir), v1Client(dir), v2Client(dir, 'auto')]);
    try {
      expect(postmasters(dir)).toHaveLength(1);
      for (const [i, client] of clients.entries()) {
        await client.callTool({
          name: 'upload_document',
          arguments: { document_id: `together/${i}.md`, content: `agent ${i}` },
        });
      }
      const listed = resultJson(
        await clients[0].callTool({ name: 'list_documents', arguments: { prefix: 'together/' } }),
      );
      expect(JSON.stringify(listed)).toMatch(/together\/0\.md.*together\/1\.md.*together\/2\.md/);
      await clients[0].close();
      expect(postmasters(dir)).toHaveLength(1);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    await waitFor(() => postmasters(dir).length === 0, 'the cluster to stop with its last user');
  });

  it('leaves the cluster to an agent alive when another is killed, and its watchdog stops it once every agent was killed without leaving', async () => {
    const dir = await usedDir();
    const clients = await Promise.all([v1Client(dir), v1Client(dir)]);
    const [first, second] = clients.map((c) => (c.transport as StdioClientTransport).pid!);
    try {
      expect(watchdogs(dir)).toHaveLength(1);
      process.kill(first, 'SIGKILL');
      // Three of the watchdog's looks later, the agent alive is still served.
      await new Promise((resolve) => setTimeout(resolve, 3 * WATCH_MS));
      expect(postmasters(dir)).toHaveLength(1);
      const listed = await clients[1].callTool({ name: 'list_documents', arguments: {} });
      expect(listed.isError ?? false).toBe(false);
      process.kill(second, 'SIGKILL');
      await waitFor(() => postmasters(dir).length === 0, 'the watchdog to stop the cluster');
      await waitFor(() => watchdogs(dir).length === 0, 'the watchdog to end');
      expect(readFileSync(join(dir, WATCHDOG_LOG), 'utf8')).toMatch(
        /stopped the embedded PostgreSQL \(pid \d+\): every process using it had ended without leaving/,
      );
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    }
  });

  it('gives a cluster whose watchdog was killed a new one when an agent joins it', async () => {
    const dir = await usedDir();
    const first = await v1Client(dir);
    const clients = [first];
    try {
      const [killed] = watchdogs(dir);
      expect(killed).toBeDefined();
      process.kill(Number(killed), 'SIGKILL');
      await waitFor(() => watchdogs(dir).length === 0, 'the watchdog to be killed');
      clients.push(await v1Client(dir));
      expect(postmasters(dir)).toHaveLength(1);
      expect(watchdogs(dir)).toHaveLength(1);
      for (const client of clients) {
        process.kill((client.transport as StdioClientTransport).pid!, 'SIGKILL');
      }
      await waitFor(() => postmasters(dir).length === 0, 'the new watchdog to stop the cluster');
      await waitFor(() => watchdogs(dir).length === 0, 'the new watchdog to end');
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    }
  });

  it('stops on SIGTERM, SIGINT or SIGHUP (a closed terminal) with its client still holding stdin: exit 0, its PostgreSQL stopped', async () => {
    // One agent a signal, each on a DATA_DIR of its own, side by side.
    const outcomes = await Promise.all(
      (['SIGTERM', 'SIGINT', 'SIGHUP'] as const).map(async (signal) => {
        const dir = await usedDir();
        const raw = new RawStdio([], env(dir));
        await raw.handshake2025();
        const running = postmasters(dir).length;
        const exited = once(raw.child, 'exit');
        // stdin stays open: the session ends on the signal alone.
        raw.child.kill(signal);
        const [code, killedBy] = await exited;
        await waitFor(() => postmasters(dir).length === 0, `the cluster to stop after ${signal}`);
        return { signal, running, code, killedBy };
      }),
    );
    expect(outcomes).toEqual(
      ['SIGTERM', 'SIGINT', 'SIGHUP'].map((signal) => ({
        signal,
        running: 1,
        code: 0,
        killedBy: null,
      })),
    );
  });

  it('starts its PostgreSQL on another port when the one it remembers is taken as it starts', async () => {
    // Two copies of a DATA_DIR remember one port: the second to bind it finds it taken after
    // its check said free (made certain here by a preload that makes the check pass).
    const dir = await usedDir();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as AddressInfo).port;
    writeFileSync(join(dir, 'pg-port'), String(taken));
    const raw = new RawStdio([], env(dir, { AGENT_DATA_TEST_PORT_SEEN_FREE: String(taken) }), [
      '-r',
      join(__dirname, 'support', 'port-seen-free.js'),
    ]);
    try {
      await raw.handshake2025();
      const port = Number(readFileSync(join(dir, 'pg-port'), 'utf8'));
      expect([port === taken, Number.isInteger(port) && port > 0]).toEqual([false, true]);
      expect(readFileSync(join(dir, 'pg', 'server.log'), 'utf8')).toMatch(
        /could not create any TCP\/IP sockets/,
      );
    } finally {
      await raw.end();
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  describe('with API keys and an access policy', () => {
    const KEY = 'stdio-key-0123456789abcdef0123';
    const secured = (dir: string, extra: Record<string, string> = {}) =>
      env(dir, {
        API_KEYS: `reader:${KEY}:internal;other:other-key-0123456789abcdef0123:readonly`,
        ACCESS_POLICY: JSON.stringify({
          rules: [{ who: ['key:reader'], read: ['team-b/'], write: ['team-b/'] }],
        }),
        ...extra,
      });

    it('refuses to start without a key, or with a key that is not one', async () => {
      const dir = await usedDir();
      const noKey = new RawStdio([], secured(dir));
      const wrong = new RawStdio(
        [],
        secured(dir, { AGENT_DATA_API_KEY: 'not-a-key-at-all-000000' }),
      );
      const [noKeyExit, wrongExit] = await Promise.all([
        once(noKey.child, 'exit'),
        once(wrong.child, 'exit'),
      ]);
      expect(noKeyExit).toEqual([1, null]);
      expect(noKey.stderr).toMatch(/an access policy is configured: give the API key/);
      expect(wrongExit).toEqual([1, null]);
      expect(wrong.stderr).toMatch(/the API key is not one of API_KEYS/);
      expect(noKey.messages).toEqual([]);
    });

    it('shows a key only its folders', async () => {
      const dir = await usedDir();
      // Without a policy the local user writes anywhere.
      const local = await v1Client(dir);
      await local.callTool({
        name: 'upload_document',
        arguments: { document_id: 'team-a/secret.md', content: 'zanzibar plans' },
      });
      await local.close();
      const client = await v1Client(dir, [], secured(dir, { AGENT_DATA_API_KEY: KEY }));
      try {
        const refused = await client.callTool({
          name: 'upload_document',
          arguments: { document_id: 'team-a/other.md', content: 'zanzibar plans' },
        });
        expect(refused.isError).toBe(true);
        const hidden = await client.callTool({
          name: 'get_document',
          arguments: { document_id: 'team-a/secret.md' },
        });
        expect(JSON.stringify(hidden)).toMatch(/NOT_FOUND/);
        await client.callTool({
          name: 'upload_document',
          arguments: { document_id: 'team-b/open.md', content: 'open plans' },
        });
        const listed = resultJson(
          await client.callTool({ name: 'list_documents', arguments: { prefix: '' } }),
        );
        expect(JSON.stringify(listed)).toContain('team-b/open.md');
        expect(JSON.stringify(listed)).not.toContain('team-a');
        const search = resultJson(
          await client.callTool({ name: 'search_knowledge', arguments: { query: 'zanzibar' } }),
        );
        expect(search.results).toEqual([]);
      } finally {
        await client.close();
      }
    });
  });

  it('answers usage errors with exit code 2', async () => {
    const raw = new RawStdio(['--profile', 'admin'], env(dataDir()));
    expect(await once(raw.child, 'exit')).toEqual([2, null]);
    expect(raw.stderr).toMatch(/--profile must be one of internal, readonly, gpt, gpt-full/);
  });
});
