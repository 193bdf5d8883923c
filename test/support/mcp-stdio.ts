// Running `agent-data mcp` from the sources for the stdio tests: its environment, the raw
// stream, and the official SDK clients (v1 with the 2025 handshake, v2 for 2026-07-28).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioTransport } from '@modelcontextprotocol/client/stdio';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AnySdkClient, resultJson } from './mcp-sdk';
import { waitFor } from './wait';

/** `agent-data` from the sources (bin/agent-data.js runs the same main from the build). */
export const LAUNCHER = join(__dirname, 'agent-data-src.js');
export const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

export function newDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-data-stdio-'));
  // As root PostgreSQL runs as the postgres user, which must reach the cluster below.
  chmodSync(dir, 0o755);
  return dir;
}

let template: Promise<string> | undefined;
let templateDir: string | undefined;

/**
 * A DATA_DIR as any start but the first finds it: its PostgreSQL cluster made (a copy of one
 * made once a test file, `cp -a` keeping the postgres user's ownership). A first start spends
 * some 3 s of its 5 on making the cluster; the tests of that first start take `newDataDir`.
 */
export async function usedDataDir(): Promise<string> {
  template ??= (async () => {
    const dir = newDataDir();
    templateDir = dir;
    const raw = new RawStdio([], env(dir));
    try {
      await raw.handshake2025();
    } finally {
      await raw.end();
    }
    // The watchdog removes its record as it ends: a copy taken before that may lose the file
    // under `cp`, or keep a record of a watchdog that is gone.
    await clusterEnded(dir);
    return dir;
  })();
  const made = await template;
  const dir = newDataDir();
  execFileSync('cp', ['-a', `${made}/.`, dir]);
  // Each copy chooses a port of its own, as a DATA_DIR of its own would.
  rmSync(join(dir, 'pg-port'), { force: true });
  return dir;
}

/** Removes the cluster `usedDataDir` copies, once its test file is done. */
export async function removeTemplate(): Promise<void> {
  await template?.catch(() => undefined);
  if (templateDir !== undefined) {
    await clusterEnded(templateDir);
    rmSync(templateDir, { recursive: true, force: true });
  }
  template = templateDir = undefined;
}

/** Waits until the embedded cluster of `dataDir` has stopped and its watchdog has ended. */
async function clusterEnded(dataDir: string): Promise<void> {
  await waitFor(() => postmasters(dataDir).length === 0, `the cluster of ${dataDir} to stop`);
  await waitFor(() => watchdogs(dataDir).length === 0, `the watchdog of ${dataDir} to end`);
}

export function env(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** PIDs of the postgres postmasters running on `dataDir`'s cluster. */
export function postmasters(dataDir: string): string[] {
  return processes(`postgres -D ${join(dataDir, 'pg')} `);
}

/** PIDs of the embedded cluster's watchdogs (src/database/embedded-watchdog.ts) of `dataDir`. */
export function watchdogs(dataDir: string): string[] {
  return processes(`embedded-watchdog[^ ]* ${dataDir} `);
}

/** PIDs of the processes whose command line matches `pattern` (pgrep -f). */
function processes(pattern: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** The raw command: lines written to stdin, every stdout line parsed, stderr kept. */
export class RawStdio {
  readonly child: ChildProcess;
  readonly messages: Array<Record<string, unknown>> = [];
  readonly unparsable: string[] = [];
  stderr = '';
  /** Whether the command has exited and its output has been read to the end. */
  closed = false;
  private pending = '';

  /** `nodeArgs` go to node before the launcher (`-r` a preload). */
  constructor(args: string[], environment: Record<string, string>, nodeArgs: string[] = []) {
    this.child = spawn(process.execPath, [...nodeArgs, LAUNCHER, 'mcp', ...args], {
      env: environment,
    });
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.pending += chunk.toString('utf8');
      let newline: number;
      while ((newline = this.pending.indexOf('\n')) !== -1) {
        const line = this.pending.slice(0, newline);
        this.pending = this.pending.slice(newline + 1);
        try {
          this.messages.push(JSON.parse(line));
        } catch {
          this.unparsable.push(line);
        }
      }
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.child.on('close', () => (this.closed = true));
  }

  send(...lines: Array<string | object>): void {
    for (const line of lines) {
      this.child.stdin!.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
    }
  }

  /** The answer to request `id`; fails at once, with what it wrote on stderr, if the command ends first. */
  answer(id: unknown, timeoutMs = 60_000): Promise<Record<string, unknown>> {
    return waitFor(
      () => {
        const answer = this.messages.find((m) => m.id === id && ('result' in m || 'error' in m));
        if (answer === undefined && this.closed) {
          throw new Error(
            `agent-data mcp exited (${this.child.exitCode ?? this.child.signalCode}) before answering request ${JSON.stringify(id)}: ${this.stderr.slice(-600)}`,
          );
        }
        return answer;
      },
      `the answer to request ${JSON.stringify(id)}`,
      timeoutMs,
    );
  }

  /**
   * The 2025 handshake: `initialize` as request `id` (protocol 2025-11-25), then
   * `notifications/initialized` once it is answered. Resolves with the answer to `initialize`.
   */
  async handshake2025(id: number | string = 1): Promise<Record<string, unknown>> {
    this.send({
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'stdio-tests', version: '1' },
      },
    });
    const answer = await this.answer(id);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return answer;
  }

  async end(): Promise<number | null> {
    const exited = this.child.exitCode !== null || this.child.signalCode !== null;
    this.child.stdin!.end();
    if (exited) return this.child.exitCode;
    const [code] = await once(this.child, 'exit');
    return code as number | null;
  }
}

export async function v1Client(
  dataDir: string,
  args: string[] = [],
  extra: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name: 'stdio-tests', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [LAUNCHER, 'mcp', ...args],
      env: env(dataDir, extra),
      stderr: 'pipe',
    }),
  );
  return client;
}

export async function v2Client(
  dataDir: string,
  mode: 'auto' | { pin: string },
  extra: Record<string, string> = {},
): Promise<V2Client> {
  const client = new V2Client(
    { name: 'stdio-tests', version: '1.0.0' },
    { versionNegotiation: { mode } },
  );
  await client.connect(
    new V2StdioTransport({
      command: process.execPath,
      args: [LAUNCHER, 'mcp'],
      env: env(dataDir, extra),
      stderr: 'pipe',
    }),
  );
  return client;
}

/**
 * Searches until `expected` is among the results (the pipeline indexes in the background; until
 * then the dense side alone may answer with another document), and returns them in rank order so
 * that the caller can say where it ranks.
 */
export async function searchUntilFound(
  client: Client | V2Client,
  query: string,
  expected: string,
): Promise<Array<{ document_id: string }>> {
  return waitFor(
    async () => {
      const found = resultJson(
        await (client as unknown as AnySdkClient).callTool({
          name: 'search_knowledge',
          arguments: { query },
        }),
      ).results as Array<{ document_id: string }>;
      return found.some((hit) => hit.document_id === expected) ? found : undefined;
    },
    `${expected} among the results for "${query}"`,
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}
