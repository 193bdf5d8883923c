// One Qdrant node for the bench scenarios that measure the lexical side in Qdrant
// (LEXICAL_STORE=qdrant) beside the local index: the binary QDRANT_BIN names, else
// ../shared/qdrant/qdrant beside the checkout (beside the main checkout for a linked git
// worktree), as the tests find it (test/support/qdrant.ts). Each node runs in a scratch folder
// of its own (its working directory: Qdrant reads ./config there; its storage, snapshots and
// log go there too), on free loopback ports, telemetry off. stop() ends it and removes the
// folder; should the bench's process die first, a watchdog shell does both.
import { getRandomPort } from 'get-port-please';
import { spawn } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from './lib.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The Qdrant server binary: `{ path }`, or `{ missing }` saying where it was looked for (one
 * line, for the scenario to print before it skips its Qdrant rows).
 */
export function qdrantBinary() {
  const explicit = process.env.QDRANT_BIN;
  const looked = explicit
    ? [resolve(explicit)]
    : checkouts(root).map((checkout) => resolve(checkout, '..', 'shared', 'qdrant', 'qdrant'));
  const path = looked.find(isExecutable);
  return path
    ? { path }
    : {
        missing: `no Qdrant server binary at ${looked.join(' or ')} (set QDRANT_BIN to a Qdrant 1.18 server binary)`,
      };
}

/** The checkout, and the main checkout when this one is a linked worktree (its .git is a file). */
function checkouts(checkout) {
  try {
    const gitdir = /^gitdir: (.+)$/m.exec(readFileSync(join(checkout, '.git'), 'utf8'))?.[1];
    if (!gitdir) return [checkout];
    const common = resolve(checkout, gitdir.trim());
    const commondir = readFileSync(join(common, 'commondir'), 'utf8').trim();
    return [checkout, dirname(resolve(common, commondir))];
  } catch {
    return [checkout];
  }
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Starts one node and resolves once `/readyz` answers 200.
 * @returns {Promise<{url: string, pid: number, dir: string, storage: string,
 *   residentMb: () => {rss: number, anon: number, file: number},
 *   diskMb: () => number, collection: (name: string) => Promise<object>,
 *   optimised: (name: string, timeoutMs?: number) => Promise<number>,
 *   restart: () => Promise<number>, stop: () => Promise<void>}>}
 */
export async function startQdrant() {
  const binary = qdrantBinary();
  if (!binary.path) throw new Error(binary.missing);
  const dir = mkdtempSync(join(tmpdir(), 'agent-data-bench-qdrant-'));
  const ports = new Set();
  while (ports.size < 2) ports.add(await getRandomPort('127.0.0.1'));
  const [http, grpc] = [...ports];
  const url = `http://127.0.0.1:${http}`;
  let node;
  const spawnNode = async () => {
    const log = openSync(join(dir, 'qdrant.log'), 'a');
    let child;
    try {
      child = spawn(binary.path, [], {
        cwd: dir,
        // Only Qdrant's settings: nothing leaks in from the shell running the bench.
        env: {
          PATH: process.env.PATH ?? '',
          QDRANT__SERVICE__HOST: '127.0.0.1',
          QDRANT__SERVICE__HTTP_PORT: String(http),
          QDRANT__SERVICE__GRPC_PORT: String(grpc),
          QDRANT__STORAGE__STORAGE_PATH: './storage',
          QDRANT__STORAGE__SNAPSHOTS_PATH: './snapshots',
          QDRANT__TELEMETRY_DISABLED: 'true',
        },
        stdio: ['ignore', log, log],
      });
    } finally {
      closeSync(log);
    }
    const current = { child, gone: false };
    current.exited = new Promise((resolve) => child.once('exit', resolve)).then(
      () => (current.gone = true),
    );
    current.watchdog = spawn(
      'sh',
      [
        '-c',
        'while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill -KILL "$2" 2>/dev/null; rm -rf "$3"',
        'qdrant-watchdog',
        String(process.pid),
        String(child.pid),
        dir,
      ],
      { stdio: 'ignore', detached: true },
    );
    current.watchdog.unref();
    node = current;
    await until(
      async () => {
        if (current.gone) throw new Error('exited');
        return (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) })).ok;
      },
      60_000,
      { what: `Qdrant at ${url} to be ready` },
    );
  };
  /** SIGTERM (SIGKILL after 10 s); the storage stays. */
  const end = async () => {
    if (!node) return;
    const { child, exited, watchdog } = node;
    if (!node.gone) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    try {
      process.kill(-watchdog.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const stop = async () => {
    await end();
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
  try {
    await spawnNode();
  } catch (error) {
    const tail = readLog(dir).trimEnd().split('\n').slice(-20).join('\n');
    await stop();
    throw new Error(`Qdrant (${binary.path}) did not start: ${error.message}; its log:\n${tail}`);
  }
  const get = async (path) => {
    const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(30_000) });
    if (!response.ok) throw new Error(`Qdrant GET ${path}: ${response.status}`);
    return (await response.json()).result;
  };
  return {
    url,
    dir,
    storage: join(dir, 'storage'),
    get pid() {
      return node.child.pid;
    },
    /** Resident memory, MB: all of it, its anonymous pages and its mapped files' pages. */
    residentMb: () => ({
      rss: Math.round(procStatus(node.child.pid, 'VmRSS') / 1024),
      anon: Math.round(procStatus(node.child.pid, 'RssAnon') / 1024),
      file: Math.round(procStatus(node.child.pid, 'RssFile') / 1024),
    }),
    /** The storage folder's size on disk, MB (blocks allocated, as `du` counts). */
    diskMb: () => Math.round(allocatedBytes(join(dir, 'storage')) / 1024 / 1024),
    /** `GET /collections/{name}`: status, points, segments, optimizer state. */
    collection: (name) => get(`/collections/${encodeURIComponent(name)}`),
    /**
     * Waits until the collection's optimizers are done (status green: segments merged and
     * indexed); how long it waited, ms.
     */
    async optimised(name, timeoutMs = 2 * 60 * 60_000) {
      const started = performance.now();
      await until(async () => (await get(`/collections/${name}`)).status === 'green', timeoutMs, {
        what: `the Qdrant collection ${name} to be optimised (green)`,
        everyMs: 1000,
      });
      return Math.round(performance.now() - started);
    },
    /** Stops the node and starts it again on its storage; resolves once it is ready: ms. */
    async restart() {
      await end();
      const started = performance.now();
      await spawnNode();
      return Math.round(performance.now() - started);
    },
    stop,
  };
}

/**
 * The server's variables for the lexical side in Qdrant, in collection `collection` of the
 * node at `url` (each server a collection of its own: Qdrant's idf is a collection's).
 */
export function qdrantMode(url, collection) {
  return { QDRANT_URL: url, LEXICAL_STORE: 'qdrant', QDRANT_COLLECTION: collection };
}

function readLog(dir) {
  try {
    return readFileSync(join(dir, 'qdrant.log'), 'utf8');
  } catch {
    return '';
  }
}

/** A field of /proc/PID/status in kB. */
function procStatus(pid, field) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function allocatedBytes(path) {
  let total = 0;
  const walk = (p) => {
    let stat;
    try {
      stat = lstatSync(p);
    } catch {
      return; // gone meanwhile (Qdrant replaces segments as it optimises)
    }
    total += stat.blocks * 512;
    if (stat.isDirectory()) {
      let names = [];
      try {
        names = readdirSync(p);
      } catch {
        return;
      }
      for (const name of names) walk(join(p, name));
    }
  };
  walk(path);
  return total;
}
