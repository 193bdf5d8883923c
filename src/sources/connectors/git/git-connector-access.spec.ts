import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GitSourceDeclaration } from '../../source-declaration';
import { GitConnector } from './git-connector';
import { Git } from './git-process';
import { aContext, aGitSource, TEST_ENV, TestRepository } from './git-repository.testing';

const TOKEN = 's3cr3t-t0ken-value';

/** A loopback HTTP server; `answer` decides each request (or leaves it hanging). */
async function aServer(
  answer: (
    request: { url: string; headers: IncomingHttpHeaders },
    respond: (status: number, headers?: Record<string, string>) => void,
  ) => void,
): Promise<{
  server: Server;
  url: string;
  requests: Array<{ url: string; headers: IncomingHttpHeaders }>;
  closed: () => number;
}> {
  const requests: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  let closedSockets = 0;
  const server = createServer((request, response) => {
    const seen = { url: request.url ?? '', headers: request.headers };
    requests.push(seen);
    answer(seen, (status, headers = {}) => {
      response.writeHead(status, headers);
      response.end();
    });
  });
  server.on('connection', (socket) => socket.on('close', () => closedSockets++));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/acme/handbook.git`,
    requests,
    closed: () => closedSockets,
  };
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

function aConnector(
  repo: TestRepository,
  source: Partial<GitSourceDeclaration>,
  options: { env?: NodeJS.ProcessEnv; networkTimeoutMs?: number; commands?: string[][] } = {},
): GitConnector {
  return new GitConnector(aGitSource(source), {
    cacheDir: repo.cacheDir(),
    env: { ...TEST_ENV, ...options.env },
    networkTimeoutMs: options.networkTimeoutMs,
    onCommand: (args) => options.commands?.push([...args]),
  });
}

/** The message a promise rejects with. */
async function failureOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('it did not fail');
}

describe('GitConnector: credentials, time and cancellation', () => {
  let repo: TestRepository;

  beforeEach(async () => {
    repo = await TestRepository.create();
  });

  afterEach(async () => {
    await repo.destroy();
  });

  it('answers a 401 with the token (never in an argument) and fails with a message free of it', async () => {
    const { server, url, requests } = await aServer((_request, respond) =>
      respond(401, { 'WWW-Authenticate': 'Basic realm="git"' }),
    );
    const commands: string[][] = [];
    try {
      const byEnv = aConnector(
        repo,
        { url, token: { env: 'HANDBOOK_TOKEN' } },
        { env: { HANDBOOK_TOKEN: TOKEN }, commands },
      );
      const message = await failureOf(byEnv.enumerate(aContext()));

      expect(message).toBe(`git ls-remote failed: Authentication failed for '${url}/'`);
      expect(requests[0].url).toBe('/acme/handbook.git/info/refs?service=git-upload-pack');
      expect(requests[0].headers.authorization).toBeUndefined();
      expect(requests.map((request) => request.headers.authorization)).toContain(
        `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`,
      );
      expect(JSON.stringify(commands)).not.toContain(TOKEN);

      const tokenFile = join(repo.root, 'token');
      await writeFile(tokenFile, `${TOKEN}-2\n`);
      requests.length = 0;
      const byFile = aConnector(repo, { url, token: { file: tokenFile }, username: 'alice' });
      expect(await failureOf(byFile.enumerate(aContext()))).not.toContain(TOKEN);
      expect(requests.map((request) => request.headers.authorization)).toContain(
        `Basic ${Buffer.from(`alice:${TOKEN}-2`).toString('base64')}`,
      );
    } finally {
      await closeServer(server);
    }
  });

  it('refuses credentials it would have to expose, before running git', async () => {
    const commands: string[][] = [];
    const env = { HANDBOOK_TOKEN: TOKEN };
    const cases: Array<[Partial<GitSourceDeclaration>, string]> = [
      [
        { url: `https://alice:${TOKEN}@git.example.com/acme/handbook.git` },
        'the URL holds a password: give it by reference instead',
      ],
      [
        { url: 'http://git.example.com/acme/handbook.git', token: { env: 'HANDBOOK_TOKEN' } },
        'a token is sent over https only',
      ],
      [
        { url: 'git@git.example.com:acme/handbook.git', token: { env: 'HANDBOOK_TOKEN' } },
        'a token is for an https URL',
      ],
      [
        { url: 'https://git.example.com/acme/handbook.git', ssh_key: { env: 'HANDBOOK_TOKEN' } },
        'ssh_key is for an ssh URL',
      ],
      [
        { url: 'https://git.example.com/acme/handbook.git', token: { env: 'UNSET_TOKEN' } },
        'the environment variable UNSET_TOKEN (token) is not set',
      ],
      [
        { url: 'ssh://git@git.example.com/handbook.git', ssh_key: { file: '/nonexistent/key' } },
        'the ssh key file /nonexistent/key cannot be read (ENOENT)',
      ],
    ];
    for (const [source, expected] of cases) {
      const message = await failureOf(
        aConnector(repo, source, { env, commands }).enumerate(aContext()),
      );
      expect(message).toContain(expected);
      expect(message).not.toContain(TOKEN);
    }
    expect(commands).toEqual([]);
  });

  it('gives ssh a key from the environment in a private file, removed after the run', async () => {
    const key =
      '-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n-----END OPENSSH PRIVATE KEY-----';
    const before = (await readdir(tmpdir())).filter((name) => name.startsWith('agent-data-ssh-'));
    // Port 1 on this machine: nothing listens, ssh fails at once (no network beyond loopback).
    const connector = aConnector(
      repo,
      { url: 'ssh://git@127.0.0.1:1/acme/handbook.git', ssh_key: { env: 'DEPLOY_KEY' } },
      { env: { DEPLOY_KEY: key } },
    );

    const message = await failureOf(connector.enumerate(aContext()));

    expect(message).toMatch(
      /^git ls-remote failed: ssh: connect to host 127\.0\.0\.1 port 1: Connection refused/,
    );
    expect(message).not.toContain('c2VjcmV0');
    const after = (await readdir(tmpdir())).filter((name) => name.startsWith('agent-data-ssh-'));
    expect(after).toEqual(before);
  });

  it('stops a command that outlives its timeout, and a run aborted through its signal, killing git', async () => {
    const { server, url, closed } = await aServer(() => {
      // Never answers.
    });
    try {
      const slow = aConnector(repo, { url }, { networkTimeoutMs: 300 });
      const started = Date.now();
      await expect(slow.enumerate(aContext())).rejects.toThrow(
        'git ls-remote did not finish within 300 ms',
      );
      expect(Date.now() - started).toBeLessThan(5000);

      const controller = new AbortController();
      const run = aConnector(repo, { url }).enumerate(aContext({ signal: controller.signal }));
      setTimeout(() => controller.abort(new Error('the run was cancelled')), 300);
      await expect(run).rejects.toThrow('the run was cancelled');
      // The killed transport lets go of its connections.
      const deadline = Date.now() + 5000;
      while (closed() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(closed()).toBe(2);

      const aborted = new AbortController();
      aborted.abort(new Error('stopped before'));
      await expect(
        aConnector(repo, { url }).enumerate(aContext({ signal: aborted.signal })),
      ).rejects.toThrow('stopped before');
    } finally {
      await closeServer(server);
    }
  });

  it('rejects the loads of an aborted run', async () => {
    await repo.write({ 'a.md': 'A', 'b.md': 'B' });
    await repo.commit('first');
    const controller = new AbortController();
    const result = await aConnector(repo, { url: repo.url }).enumerate(
      aContext({ signal: controller.signal }),
    );
    await expect(result.items[0].load!()).resolves.toEqual({ body: 'A' });

    controller.abort(new Error('the server stops'));

    await expect(result.items[1].load!()).rejects.toThrow('the server stops');
  });
});

describe('Git.redact', () => {
  it('takes the secrets and any password in a URL out of a message', () => {
    const git = new Git({
      baseEnv: {},
      env: {},
      config: [],
      secrets: [TOKEN],
      signal: new AbortController().signal,
    });

    expect(
      git.redact(`fatal: unable to access 'https://bob:hunter2@host/x.git/': ${TOKEN} refused`),
    ).toBe(`fatal: unable to access 'https://bob:***@host/x.git/': *** refused`);
  });
});
