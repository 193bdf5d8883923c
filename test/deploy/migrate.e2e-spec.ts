import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { MIGRATIONS } from '../../migrations';
import { databaseUrl } from '../support/database';
import { freePort } from '../server-process-helpers';
import { NodeProcess, runEntryPoint, waitUntilServing } from './node-process';
import { waitFor } from '../support/wait';

/**
 * The migration Job's command (`node dist/src/migrate.js`, here from source): on an empty
 * database it applies every migration and exits 0; run again it changes nothing; two runs
 * at once take turns; a bad configuration exits 1 with one line naming the variable.
 */
jest.setTimeout(60_000);

/**
 * An empty database (not the migrated template: a deploy meets a fresh server) created on
 * the test server before the enclosing describe and dropped after it.
 */
function emptyDatabase(prefix: string): string {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  let admin: Client;
  beforeAll(async () => {
    admin = new Client({ connectionString: process.env.AGENT_DATA_TEST_SERVER_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  return databaseUrl(name);
}

describe('three servers starting at once on a fresh database (MIGRATIONS_RUN=true)', () => {
  const url = emptyDatabase('deploy_replicas');

  it('take turns on the migration lock: every migration is applied once and all three serve', async () => {
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const servers = ports.map((port) =>
      runEntryPoint('main.ts', {
        DATABASE_URL: url,
        MIGRATIONS_RUN: 'true',
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        VECTOR_SYNC_ENABLED: 'false',
      }),
    );
    try {
      await Promise.all(
        servers.map((server, i) =>
          waitUntilServing(`http://127.0.0.1:${ports[i]}/health/ready`, server, 1200),
        ),
      );
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        const rows = (
          await client.query<{ name: string }>('SELECT name FROM typeorm_migrations ORDER BY id')
        ).rows;
        expect(rows.map((row) => row.name)).toEqual(MIGRATIONS.map((m) => m.name));
      } finally {
        await client.end();
      }
      // None of them ran into DDL another one was running.
      expect(servers.map((server) => server.output()).join('\n')).not.toMatch(
        /already exists|failed to start/,
      );
    } finally {
      for (const server of servers) server.child.kill('SIGTERM');
      await Promise.all(servers.map((server) => server.exited));
    }
  }, 120_000);
});

describe('migration entry point (src/migrate.ts)', () => {
  const url = emptyDatabase('deploy_migrate');

  /** Both runs have connected and found the lock taken (each says so once). */
  async function waitForWaitingRuns(runs: NodeProcess[]): Promise<void> {
    await waitFor(
      () => runs.every((run) => run.output().includes('another migration run holds the lock')),
      'both runs to wait on the lock',
      { timeoutMs: 60_000, intervalMs: 100 },
    ).catch((error: Error) => {
      throw new Error(`${error.message}:\n${runs.map((r) => r.output()).join('\n')}`);
    });
  }

  async function appliedMigrations(): Promise<string[]> {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const result = await client.query<{ name: string }>(
        'SELECT name FROM typeorm_migrations ORDER BY id',
      );
      return result.rows.map((row) => row.name);
    } finally {
      await client.end();
    }
  }

  it('applies every migration to an empty database, runs taking turns on a lock, and exits 0', async () => {
    // Hold the runners' lock so that both runs provably wait at the same moment.
    const holder = new Client({ connectionString: url });
    await holder.connect();
    await holder.query(`SELECT pg_advisory_lock(hashtext('agent-data:migrations'))`);
    const runs = [
      runEntryPoint('migrate.ts', { DATABASE_URL: url }),
      runEntryPoint('migrate.ts', { DATABASE_URL: url }),
    ];
    try {
      await waitForWaitingRuns(runs);
      const tables = await holder.query(`SELECT to_regclass('kb_documents') AS t`);
      expect(tables.rows[0].t).toBeNull();
    } finally {
      await holder.end();
    }
    const codes = await Promise.all(runs.map((run) => run.exited));
    const outputs = runs.map((run) => run.output());
    expect({ codes, outputs }).toMatchObject({ codes: [0, 0] });
    // One run did the work, the other found nothing left to do.
    expect(outputs.join('\n')).toMatch(/applied InitialSchema/);
    expect(outputs.join('\n')).toMatch(/schema is up to date/);
    await expect(appliedMigrations()).resolves.toEqual(MIGRATIONS.map((m) => m.name));
  });

  it('changes nothing when the schema is current', async () => {
    const run = runEntryPoint('migrate.ts', { DATABASE_URL: url });
    expect({ code: await run.exited, output: run.output() }).toEqual({
      code: 0,
      output: 'agent-data migrate: schema is up to date\n',
    });
    await expect(appliedMigrations()).resolves.toHaveLength(MIGRATIONS.length);
  });

  it("reads only where the database is: the image's HOST=0.0.0.0 without API keys does not stop it", async () => {
    // The server refuses both of these settings; the migration Job of the chart passes only
    // DATABASE_URL into the image, which sets HOST=0.0.0.0.
    const run = runEntryPoint('migrate.ts', {
      DATABASE_URL: url,
      HOST: '0.0.0.0',
      EMBEDDINGS_MODEL: 'text-embedding-3-small',
    });
    expect({ code: await run.exited, output: run.output() }).toEqual({
      code: 0,
      output: 'agent-data migrate: schema is up to date\n',
    });
  });

  it('exits 1 with one line naming the variable when the configuration is invalid', async () => {
    const run = runEntryPoint('migrate.ts', { DATABASE_URL: 'mysql://nope' });
    expect(await run.exited).toBe(1);
    expect(run.output()).toBe(
      'agent-data migrate: invalid configuration: DATABASE_URL: must be a postgres:// or postgresql:// connection string\n',
    );
  });

  it('exits 1 without echoing the connection string when the server is unreachable', async () => {
    const secret = 'pw-' + randomBytes(6).toString('hex');
    const run = runEntryPoint('migrate.ts', {
      DATABASE_URL: `postgres://agent:${secret}@127.0.0.1:1/agent_data`,
    });
    expect(await run.exited).toBe(1);
    expect(run.output()).toMatch(/^agent-data migrate: failed: .*ECONNREFUSED/);
    expect(run.output()).not.toContain(secret);
  });
});
