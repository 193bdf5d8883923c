import { getRandomPort } from 'get-port-please';
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type QdrantBinary, qdrantBinary as findQdrantBinary } from '../../tools/qdrant-binary';
import { qdrantRequest } from './qdrant-rest';
import { waitFor } from './wait';

/**
 * The real Qdrant server in the tests, as the embedded PostgreSQL is: one node shared by the
 * run (test/global-setup.mjs starts it and hands its URL to the workers), nodes of a suite's
 * own, and three-node clusters in distributed mode. Each node runs in a temporary folder of its
 * own (Qdrant reads ./config there; storage, snapshots and its log go there too) on free loopback
 * ports, and goes with its folder when stopped.
 */

/** Generous on a loaded two-core machine: a node is ready in about a second when idle. */
const READY_MS = 60_000;
/** How long a node has to finish after SIGTERM before it is SIGKILLed. */
const STOP_MS = 10_000;
const ROOT = join(__dirname, '..', '..');
/** The running process's pid, in the node's folder, for the watchdog. */
const PID_FILE = 'qdrant.pid';

export type { QdrantBinary } from '../../tools/qdrant-binary';

/** Where the Qdrant server binary is: tools/qdrant-binary.js, for this checkout. */
export function qdrantBinary(): QdrantBinary {
  return findQdrantBinary(ROOT);
}

/** CI as the usual runners say it (`CI=true`, `CI=1`). */
function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && !/^(false|0)$/i.test(ci);
}

/**
 * A Qdrant server for suites that only need one: `QDRANT_URL` (an external server, with
 * `QDRANT_API_KEY`), else the node the run's global setup started; undefined without either.
 */
export function testQdrantUrl(): string | undefined {
  return (process.env.QDRANT_URL || process.env.AGENT_DATA_TEST_QDRANT_URL)?.replace(/\/+$/, '');
}

/**
 * `describe` when the suite can run: for `'server'`, when there is a server (testQdrantUrl);
 * for `'binary'` (the suite starts nodes of its own), when there is a binary. Without one: in CI,
 * or when QDRANT_BIN names nothing, a suite of one failing test that says where the binary was
 * looked for; elsewhere `describe.skip`, after one line saying why.
 */
export function describeWithQdrant(what: string, needs: 'server' | 'binary'): jest.Describe {
  const binary = qdrantBinary();
  if (needs === 'server' ? testQdrantUrl() !== undefined : binary.path !== undefined) {
    return describe;
  }
  if (inCi() || binary.misconfigured) {
    const failing = (name: string) =>
      describe(name, () => {
        it('has a Qdrant server binary to run against', () => {
          const why = binary.misconfigured ? '' : ' (in CI they must run, not be skipped)';
          throw new Error(`${what} cannot run${why}: ${binary.missing}`);
        });
      });
    return failing as unknown as jest.Describe;
  }
  process.stderr.write(`${what} not run: ${binary.missing}\n`);
  return describe.skip;
}

export interface QdrantNodeOptions {
  /** More settings, as Qdrant's variables (`QDRANT__SERVICE__API_KEY`: value). */
  readonly settings?: Readonly<Record<string, string>>;
  /**
   * Distributed mode: the node gets a peer-to-peer port, and joins the cluster whose first
   * peer's p2p URI is `bootstrap` (none: it is that first peer).
   */
  readonly cluster?: { readonly bootstrap?: string };
}

/** One Qdrant process on loopback, which a test may SIGKILL and start again. */
export class QdrantNode {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** Kills the node and removes its folder should this process die without destroy(). */
  private watchdog: ChildProcess | undefined;

  private constructor(
    private readonly binary: string,
    readonly dir: string,
    private readonly options: QdrantNodeOptions,
    private ports: { http: number; grpc: number; p2p: number },
  ) {}

  /** Starts a node in a fresh folder and resolves once `/readyz` answers. */
  static async start(options: QdrantNodeOptions = {}): Promise<QdrantNode> {
    const binary = qdrantBinary();
    if (!binary.path) throw new Error(binary.missing);
    const node = new QdrantNode(
      binary.path,
      mkdtempSync(join(tmpdir(), 'agent-data-qdrant-')),
      options,
      await freePorts(),
    );
    node.startWatchdog();
    try {
      // A free port can be taken between its choice and Qdrant's bind: then new ports, twice.
      for (let attempt = 1; ; attempt++) {
        try {
          await node.start();
          return node;
        } catch (error) {
          if (attempt === 3 || !/Address already in use/.test(node.log())) throw error;
          for (const folder of ['storage', 'snapshots']) {
            rmSync(join(node.dir, folder), { recursive: true, force: true });
          }
          node.ports = await freePorts();
        }
      }
    } catch (error) {
      await node.destroy();
      throw error;
    }
  }

  get url(): string {
    return `http://127.0.0.1:${this.ports.http}`;
  }

  /** This node's address among the peers (distributed mode). */
  get p2pUri(): string {
    return `http://127.0.0.1:${this.ports.p2p}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /**
   * Starts the process (again, after kill() or stop(): same ports, same storage) and waits for
   * `/readyz`. On failure it says why, with the last lines of the log.
   */
  async start(): Promise<void> {
    if (this.child) throw new Error(`Qdrant at ${this.url} is already running`);
    const log = openSync(join(this.dir, 'qdrant.log'), 'a');
    const args = this.options.cluster
      ? [
          '--uri',
          this.p2pUri,
          ...(this.options.cluster.bootstrap
            ? ['--bootstrap', this.options.cluster.bootstrap]
            : []),
        ]
      : [];
    let child: ChildProcess;
    try {
      child = spawn(this.binary, args, {
        cwd: this.dir,
        // Only Qdrant's settings: none leaks in from the shell running the tests.
        env: {
          PATH: process.env.PATH ?? '',
          QDRANT__SERVICE__HOST: '127.0.0.1',
          QDRANT__SERVICE__HTTP_PORT: String(this.ports.http),
          QDRANT__SERVICE__GRPC_PORT: String(this.ports.grpc),
          QDRANT__STORAGE__STORAGE_PATH: './storage',
          QDRANT__STORAGE__SNAPSHOTS_PATH: './snapshots',
          QDRANT__TELEMETRY_DISABLED: 'true',
          ...(this.options.cluster
            ? {
                QDRANT__CLUSTER__ENABLED: 'true',
                QDRANT__CLUSTER__P2P__PORT: String(this.ports.p2p),
              }
            : {}),
          ...this.options.settings,
        },
        stdio: ['ignore', log, log],
      });
    } finally {
      closeSync(log);
    }
    this.child = child;
    let exit: string | undefined;
    this.exited = once(child, 'exit').then(
      ([code, signal]) => {
        exit = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        this.ended(child);
      },
      (error: Error) => {
        exit = `could not be run: ${error.message}`;
        this.ended(child);
      },
    );
    if (child.pid !== undefined) writeFileSync(join(this.dir, PID_FILE), String(child.pid));
    try {
      await waitFor(
        async () => {
          if (exit) throw new Error(exit);
          return fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(5_000) })
            .then((r) => r.ok)
            .catch(() => false);
        },
        '/readyz',
        { timeoutMs: READY_MS, intervalMs: 100 },
      );
    } catch (error) {
      await this.kill();
      throw new Error(
        `Qdrant (${this.binary}) at ${this.url} did not start: ${(error as Error).message}; ` +
          `the last lines of its log:\n${this.log().trimEnd().split('\n').slice(-30).join('\n')}`,
      );
    }
  }

  /** SIGKILL, as a crash: resolves once the process is gone. Storage stays for start(). */
  async kill(): Promise<void> {
    this.child?.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, then SIGKILL if it has not ended within a bound. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_MS);
    await this.exited;
    clearTimeout(timer);
  }

  /** Stops the node and removes its folder (storage, snapshots, log). */
  async destroy(): Promise<void> {
    await this.stop();
    this.stopWatchdog();
    rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 });
  }

  log(): string {
    try {
      return readFileSync(join(this.dir, 'qdrant.log'), 'utf8');
    } catch {
      return '';
    }
  }

  /**
   * A shell that waits for this process (jest or one of its workers) to end, then SIGKILLs the
   * node running then (its pid is in the folder while it runs) and removes the folder: a worker
   * jest kills, or a run stopped before its teardown, leaves no Qdrant and no folder behind.
   * Its own process group, so that stopping it ends its `sleep` too.
   */
  private startWatchdog(): void {
    this.watchdog = spawn(
      'sh',
      [
        '-c',
        'while kill -0 "$1" 2>/dev/null; do sleep 1; done; ' +
          'if [ -f "$2/$3" ]; then kill -KILL "$(cat "$2/$3")" 2>/dev/null; fi; rm -rf "$2"',
        'qdrant-watchdog',
        String(process.pid),
        this.dir,
        PID_FILE,
      ],
      { stdio: 'ignore', detached: true },
    );
    this.watchdog.unref();
  }

  private ended(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = undefined;
    rmSync(join(this.dir, PID_FILE), { force: true });
  }

  private stopWatchdog(): void {
    const watchdog = this.watchdog;
    this.watchdog = undefined;
    if (watchdog?.pid === undefined || watchdog.exitCode !== null) return;
    try {
      process.kill(-watchdog.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

async function freePorts(): Promise<{ http: number; grpc: number; p2p: number }> {
  const ports = new Set<number>();
  while (ports.size < 3) ports.add(await getRandomPort('127.0.0.1'));
  const [http, grpc, p2p] = [...ports];
  return { http, grpc, p2p };
}

/** Nodes in distributed mode on loopback (three by default); any may be killed and started again. */
export class QdrantCluster {
  private constructor(readonly nodes: readonly QdrantNode[]) {}

  /** Starts the first peer, then the others one at a time, and waits until each lists them all. */
  static async start(size = 3): Promise<QdrantCluster> {
    const nodes: QdrantNode[] = [];
    try {
      nodes.push(await QdrantNode.start({ cluster: {} }));
      while (nodes.length < size) {
        nodes.push(await QdrantNode.start({ cluster: { bootstrap: nodes[0].p2pUri } }));
        await waitForPeers(nodes, nodes.length);
      }
      return new QdrantCluster(nodes);
    } catch (error) {
      await Promise.all(nodes.map((node) => node.destroy()));
      throw error;
    }
  }

  /** Base URLs of the nodes, in order. */
  get urls(): string[] {
    return this.nodes.map((node) => node.url);
  }

  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.destroy()));
  }
}

/** Waits until each running node's `GET /cluster` lists `count` peers and knows a leader. */
async function waitForPeers(nodes: readonly QdrantNode[], count: number): Promise<void> {
  await waitFor(
    async () => {
      for (const node of nodes.filter((n) => n.running)) {
        const cluster = await qdrantRequest<{
          peers: Record<string, unknown>;
          raft_info: { leader: number | null };
        }>(node.url, 'GET', '/cluster');
        if (Object.keys(cluster.peers).length !== count || !cluster.raft_info.leader) return false;
      }
      return true;
    },
    `${count} Qdrant peers`,
    { timeoutMs: READY_MS, intervalMs: 200, retryErrors: true },
  );
}
