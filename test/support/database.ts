import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  /** A connected client on this database; closed by drop(). */
  client(): Promise<Client>;
  drop(): Promise<void>;
}

function serverUrl(): string {
  const url = process.env.AGENT_DATA_TEST_SERVER_URL;
  if (!url)
    throw new Error(
      'AGENT_DATA_TEST_SERVER_URL is unset: run integration tests through jest (test/global-setup.mjs)',
    );
  return url;
}

export function databaseUrl(name: string): string {
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A fresh database cloned from the migrated template: one per test file, no shared state.
 * `{ empty: true }` gives a database with no schema at all (for migration tests).
 */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const name = `${options.empty ? 'empty' : 'test'}_${randomBytes(6).toString('hex')}`;
  const template = options.empty ? '' : ` TEMPLATE ${process.env.AGENT_DATA_TEST_TEMPLATE}`;
  const admin = new Client({ connectionString: serverUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}${template}`);
  } finally {
    await admin.end();
  }
  const clients: Client[] = [];
  return {
    url: databaseUrl(name),
    name,
    async client() {
      const client = new Client({ connectionString: databaseUrl(name) });
      // A connection a test ends from the server (pg_terminate_backend) fails its next query;
      // its error event, without a listener, would end the whole test run instead.
      client.on('error', () => undefined);
      await client.connect();
      clients.push(client);
      return client;
    },
    async drop() {
      await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
      const dropper = new Client({ connectionString: serverUrl() });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}
