import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

// The embedded cluster's watchdog: a small process, started with the cluster in a session of
// its own, that stops the cluster once every process registered as using it has ended without
// leaving. The last user to leave stops the cluster itself (embedded-postgres.ts); a user
// killed (SIGKILL, the end of a client that gives its agent no time, an out-of-memory kill)
// never leaves, and without this the cluster would run until the next process on the same
// DATA_DIR joined it.

/** How often the watchdog looks at the cluster's users. */
export const WATCH_MS = 2_000;

/** What the watchdog writes, one line a stop, under DATA_DIR. */
export const WATCHDOG_LOG = 'pg-watchdog.log';

/**
 * Starts the watchdog of the postmaster `postmasterPid` just started in `layout`: detached,
 * its output discarded, so that it outlives the process that started the cluster. From the
 * sources (jest, ts-node) it compiles its own, as the worker threads do.
 */
export function startWatchdog(
  layout: Layout,
  postmasterPid: number,
  log: { warn(message: string): void },
): void {
  const entry = __filename.endsWith('.ts')
    ? join(__dirname, 'embedded-watchdog-ts.js')
    : join(__dirname, 'embedded-watchdog.js');
  let pid: number | undefined;
  try {
    const child = spawn(process.execPath, [entry, layout.dataDir, String(postmasterPid)], {
      detached: true,
      stdio: 'ignore',
      windowsHide: true,
    });
    child.on('error', (error) => log.warn(`embedded PostgreSQL watchdog: ${error.message}`));
    child.unref();
    pid = child.pid;
  } catch (error) {
    log.warn(`embedded PostgreSQL watchdog not started: ${(error as Error).message}`);
  }
  if (pid === undefined) return;
  try {
    writeFileSync(layout.watchdogFile, `${pid} ${postmasterPid}\n`);
  } catch (error) {
    // The watchdog runs; a process joining later only starts another beside it.
    log.warn(`embedded PostgreSQL watchdog not recorded: ${(error as Error).message}`);
  }
}

/**
 * Starts a watchdog for the running postmaster `postmasterPid` unless it has one: a process
 * joining a cluster whose watchdog was killed, or that a version without one started, gives
 * it one. Called under the DATA_DIR's lock, as the start is.
 */
export function ensureWatchdog(
  layout: Layout,
  postmasterPid: number,
  log: { warn(message: string): void },
): void {
  if (watchdogOf(layout, postmasterPid) === undefined) startWatchdog(layout, postmasterPid, log);
}

/** The PID of the living watchdog of `postmasterPid`, if it has one. */
function watchdogOf(layout: Layout, postmasterPid: number): number | undefined {
  let recorded: string;
  try {
    recorded = readFileSync(layout.watchdogFile, 'utf8');
  } catch {
    return undefined;
  }
  const [pid, watched] = recorded.trim().split(' ').map(Number);
  if (watched !== postmasterPid || !Number.isInteger(pid) || !isAlive(pid)) return undefined;
  // A PID the system gave another process since: on Linux its command line tells.
  try {
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('embedded-watchdog')) {
      return undefined;
    }
  } catch {
    // No /proc (macOS): a living process of that PID is taken for the watchdog.
  }
  return pid;
}

/**
 * Watches the postmaster `postmasterPid` of `dataDir` until it is gone: stopped by its last
 * user, by this watchdog once no registered user is alive, or replaced (a cluster started
 * again has a watchdog of its own). Users are looked at without the lock (a dead one's file
 * goes, as any process leaving does); only when none is alive is the lock taken, under which
 * a process starting or joining registers, and the users looked at again before the stop.
 */
export async function watch(dataDir: string, postmasterPid: number): Promise<void> {
  const layout = layoutOf(dataDir);
  const note = (message: string) => {
    try {
      appendFileSync(join(dataDir, WATCHDOG_LOG), `${new Date().toISOString()} ${message}\n`);
    } catch {
      // DATA_DIR removed or read-only: nothing to say it in.
    }
  };
  const ours = () => readPostmaster(layout)?.pid === postmasterPid && isAlive(postmasterPid);
  const end = () => {
    // Its record goes with it, unless a watchdog of another cluster has written its own.
    if (watchdogOf(layout, postmasterPid) === process.pid) {
      rmSync(layout.watchdogFile, { force: true });
    }
  };
  for (;;) {
    await sleep(WATCH_MS);
    if (!ours()) return end();
    let living: number[];
    try {
      living = livingUsers(layout);
    } catch {
      return end(); // DATA_DIR removed
    }
    if (living.length > 0) continue;
    const stopped = await underLock(layout, { warn: note }, async () => {
      if (!ours() || livingUsers(layout).length > 0) return false;
      await stopCluster(layout, { warn: note });
      return true;
    }).catch((error: unknown) => {
      note(`watchdog: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    });
    if (stopped) {
      note(
        `stopped the embedded PostgreSQL (pid ${postmasterPid}): every process using it had ended without leaving`,
      );
      return end();
    }
  }
}

/** `node embedded-watchdog.js DATA_DIR POSTMASTER_PID` */
export function main(args: string[]): void {
  const [dataDir, pid] = args;
  const postmasterPid = Number(pid);
  if (!dataDir || !Number.isInteger(postmasterPid) || postmasterPid <= 0) {
    process.exitCode = 2;
    return;
  }
  void watch(dataDir, postmasterPid);
}

if (require.main === module) main(process.argv.slice(2));
