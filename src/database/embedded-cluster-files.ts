import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';

// The files under DATA_DIR through which Agent Data processes share one embedded PostgreSQL
// cluster (embedded-postgres.ts): who uses it, who may start or stop it now, where it listens.

/** Where the shared cluster keeps what its users need under DATA_DIR. */
export interface Layout {
  readonly dataDir: string;
  readonly clusterDir: string;
  readonly passwordFile: string;
  /** The port of the last start, reused when free so that a restarted cluster keeps its URL. */
  readonly portFile: string;
  /** One empty file per process using the cluster, named by its PID. */
  readonly usersDir: string;
  /** Taken while a process decides to start, join, leave or stop the cluster. */
  readonly lockFile: string;
  /** The cluster's watchdog (embedded-watchdog.ts): its PID and its postmaster's. */
  readonly watchdogFile: string;
}

/** The layout of `dataDir`. */
export function layoutOf(dataDir: string): Layout {
  return {
    dataDir,
    clusterDir: join(dataDir, 'pg'),
    passwordFile: join(dataDir, 'pg-password'),
    portFile: join(dataDir, 'pg-port'),
    usersDir: join(dataDir, 'pg-users'),
    lockFile: join(dataDir, 'pg.lock'),
    watchdogFile: join(dataDir, 'pg-watchdog'),
  };
}

/** Runs `work` holding the DATA_DIR's lock file (waiting up to two minutes for it). */
export async function underLock<T>(
  layout: Layout,
  log: { warn(message: string): void },
  work: () => Promise<T>,
): Promise<T> {
  let release: () => Promise<void>;
  try {
    release = await lock(layout.dataDir, {
      lockfilePath: layout.lockFile,
      realpath: false,
      // A holder refreshes the lock every 2 s; one silent for 10 s was killed.
      stale: 10_000,
      update: 2_000,
      retries: { retries: 1_200, factor: 1, minTimeout: 100, maxTimeout: 100 },
      onCompromised: (error) => log.warn(`DATA_DIR lock ${layout.lockFile}: ${error.message}`),
    });
  } catch (error) {
    throw new Error(
      `could not take ${layout.lockFile} within two minutes (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  try {
    return await work();
  } finally {
    await release().catch(() => undefined);
  }
}

/** PIDs of the other processes registered as using the cluster; the dead ones are forgotten. */
export function livingUsers(layout: Layout): number[] {
  const living: number[] = [];
  for (const name of readdirSync(layout.usersDir)) {
    const pid = Number(name);
    if (pid === process.pid) continue;
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) living.push(pid);
    else rmSync(join(layout.usersDir, name), { force: true });
  }
  return living;
}

/** The PID, port and status lines of `postmaster.pid`, when the file is there and readable. */
export function readPostmaster(
  layout: Layout,
): { pid: number; port: number; status: string } | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(layout.clusterDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port)) return undefined;
  return { pid, port, status: (lines[7] ?? '').trim() };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Fast shutdown of the cluster, waiting (unless told not to) until its postmaster is gone. */
export async function stopCluster(
  layout: Layout,
  log: { warn(message: string): void },
  wait = true,
): Promise<void> {
  const postmaster = readPostmaster(layout);
  if (postmaster === undefined || !isAlive(postmaster.pid)) return;
  process.kill(postmaster.pid, 'SIGINT');
  if (!wait) return;
  for (let i = 0; i < 600 && isAlive(postmaster.pid); i++) await sleep(50);
  if (isAlive(postmaster.pid)) {
    log.warn(`PostgreSQL pid ${postmaster.pid} in ${layout.clusterDir} did not stop in 30 s`);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
