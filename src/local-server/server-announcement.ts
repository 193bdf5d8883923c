import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { isAlive } from '../database/embedded-cluster-files';

// How a server tells the processes of its machine that it runs on a DATA_DIR, so that
// `agent-data mcp` goes through it instead of building an application of its own
// (docs/cli.md). Nothing here imports Nest, the SDK or a database driver: the command reads
// this before it decides what to load.

/** The file, under DATA_DIR. */
export const ANNOUNCEMENT_FILE = 'server.json';

/** What DATA_DIR/server.json holds (mode 0600: it carries a credential). */
export interface ServerAnnouncement {
  /** The server process; in cluster mode the primary, which outlives its workers. */
  readonly pid: number;
  /** Where a process on this machine reaches it (see {@link reachableUrl}). */
  readonly url: string;
  readonly version: string;
  /** When it started, ISO 8601. */
  readonly started_at: string;
  /** Which database it serves (see {@link databaseIdentity}). */
  readonly database: string;
  /**
   * The credential of an agent on this machine that has no API key: the server admits it
   * as the local user, as `agent-data mcp` running in-process would act. Whoever can read
   * this file can read DATA_DIR's database password too, so it grants nothing more.
   */
  readonly local_token: string;
}

/** A fresh {@link ServerAnnouncement.local_token}. */
export function newLocalToken(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * The URL a process on this machine reaches a server listening on `host`: loopback when it
 * listens on every address, else the address itself (a server bound to one interface
 * does not answer on 127.0.0.1).
 */
export function reachableUrl(host: string, port: number): string {
  if (host === '' || host === '0.0.0.0' || host === '::') return `http://127.0.0.1:${port}`;
  return isIP(host) === 6 ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}

/**
 * Names a server's database without revealing it: `embedded` for the cluster under
 * DATA_DIR, else a digest of DATABASE_URL keyed by the announcement's token (the URL holds
 * a password). An agent compares it with what it would open itself.
 */
export function databaseIdentity(databaseUrl: string | undefined, token: string): string {
  if (databaseUrl === undefined) return 'embedded';
  return `url:${createHmac('sha256', token).update(databaseUrl).digest('base64url').slice(0, 22)}`;
}

/** The announcement in `dataDir`, whether or not its server still runs; `undefined` if none. */
export function readAnnouncement(dataDir: string): ServerAnnouncement | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(join(dataDir, ANNOUNCEMENT_FILE), 'utf8'));
  } catch {
    return undefined; // absent, or half-written by hand: as good as none
  }
  const a = value as Partial<ServerAnnouncement> | null;
  const strings = [a?.url, a?.version, a?.started_at, a?.database, a?.local_token];
  if (!Number.isInteger(a?.pid) || strings.some((s) => typeof s !== 'string')) return undefined;
  return a as ServerAnnouncement;
}

/**
 * The announcement in `dataDir` when its server runs: its process is alive and
 * `GET /health/live` answers 200 within `timeoutMs`. A file left by a killed server, or
 * naming a URL where nothing answers, is `undefined`.
 */
export async function liveAnnouncement(
  dataDir: string,
  timeoutMs = 1000,
): Promise<ServerAnnouncement | undefined> {
  const announced = readAnnouncement(dataDir);
  if (announced === undefined || !(await isLive(announced, timeoutMs))) return undefined;
  return announced;
}

async function isLive(announced: ServerAnnouncement, timeoutMs: number): Promise<boolean> {
  return isAlive(announced.pid) && (await answersLive(announced.url, timeoutMs));
}

function answersLive(url: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL('/health/live', url);
    } catch {
      return resolve(false);
    }
    const probe = request(target, { method: 'GET', timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    probe.once('timeout', () => probe.destroy());
    probe.once('error', () => resolve(false));
    probe.end();
  });
}

export interface AnnouncementLog {
  info(message: string): void;
  warn(message: string): void;
}

/**
 * Announces this process in `dataDir` (atomically: a temporary file renamed over the
 * old one) and withdraws the announcement when a SIGTERM or SIGINT starts the shutdown,
 * so that agents starting meanwhile do not bridge to a server that is draining, or at the
 * latest when the process exits. A stale announcement is replaced; a live one of another
 * server on the same DATA_DIR is left alone (agents keep going to that one). Returns the
 * withdrawal, which is safe to call twice.
 */
export async function announceServer(
  dataDir: string,
  announcement: Omit<ServerAnnouncement, 'pid' | 'started_at'>,
  log: AnnouncementLog,
): Promise<() => void> {
  const other = readAnnouncement(dataDir);
  if (other !== undefined && other.pid !== process.pid && (await isLive(other, 1000))) {
    log.warn(
      `${join(dataDir, ANNOUNCEMENT_FILE)} names the server pid ${other.pid} at ${other.url}, which runs: agent-data mcp on this DATA_DIR goes to that one`,
    );
    return () => undefined;
  }
  const file = join(dataDir, ANNOUNCEMENT_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  const written: ServerAnnouncement = {
    pid: process.pid,
    url: announcement.url,
    version: announcement.version,
    started_at: new Date().toISOString(),
    database: announcement.database,
    local_token: announcement.local_token,
  };
  try {
    // With DATABASE_URL nothing else may have created DATA_DIR yet.
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(temporary, `${JSON.stringify(written, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, file);
  } catch (error) {
    // Agents then run in-process, as before: no reason to refuse to serve.
    log.warn(`could not announce the server in ${file}: ${(error as Error).message}`);
    return () => undefined;
  }
  log.info(`announced in ${file}: agent-data mcp on this DATA_DIR goes through ${written.url}`);

  let withdrawn = false;
  const withdraw = () => {
    if (withdrawn) return;
    withdrawn = true;
    // Another server may have replaced a file it found stale (this one hung): leave its own.
    if (readAnnouncement(dataDir)?.pid === process.pid) rmSync(file, { force: true });
  };
  process.on('SIGTERM', withdraw);
  process.on('SIGINT', withdraw);
  process.once('exit', withdraw);
  return withdraw;
}
