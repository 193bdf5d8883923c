import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../migrations';
import { dataSourceOptions } from '../src/database/data-source-options';
import { startTestApp } from './support/app';
import { createTestDatabase, TestDatabase } from './support/database';

const ROOT = join(__dirname, '..');
const MIGRATION_NAMES = MIGRATIONS.map((migration) => new migration().name);

async function appliedMigrations(client: Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT name FROM typeorm_migrations ORDER BY timestamp`,
  );
  return rows.map((row) => row.name);
}

async function tableExists(client: Client, table: string): Promise<boolean> {
  const { rows } = await client.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [table]);
  return rows[0].present;
}

describe('migrations', () => {
  it('run at start-up on an empty database', async () => {
    const db = await createTestDatabase({ empty: true });
    const t = await startTestApp({ MIGRATIONS_RUN: 'true' }, db);
    try {
      const client = await db.client();
      expect(await appliedMigrations(client)).toEqual(MIGRATION_NAMES);
      await request(t.baseUrl).get('/health/ready').expect(200);
      await request(t.baseUrl)
        .post('/documents')
        .send({ document_id: 'migrated/doc.md', body: 'x' })
        .expect(201);
    } finally {
      await t.close();
      await db.drop();
    }
  });

  it('all revert, leaving nothing behind, and apply again', async () => {
    const db = await createTestDatabase({ empty: true });
    const dataSource = new DataSource(dataSourceOptions(db.url, 1));
    await dataSource.initialize();
    try {
      await dataSource.runMigrations({ transaction: 'each' });
      // 'none': undo ignores a migration's own `transaction = false` (CONCURRENTLY).
      for (let i = 0; i < MIGRATION_NAMES.length; i++) {
        await dataSource.undoLastMigration({ transaction: 'none' });
      }
      const client = await db.client();
      expect(await appliedMigrations(client)).toEqual([]);
      const { rows } = await client.query(
        `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'public' AND c.relname LIKE 'kb\\_%'
         UNION ALL
         SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = 'public' AND p.proname LIKE 'kb\\_%'`,
      );
      expect(rows).toEqual([]);
      await dataSource.runMigrations({ transaction: 'each' });
      expect(await appliedMigrations(client)).toEqual(MIGRATION_NAMES);
      expect(await tableExists(client, 'kb_documents')).toBe(true);
    } finally {
      await dataSource.destroy();
      await db.drop();
    }
  }, 30_000);

  it('run and revert through npm run migration:run / migration:revert', async () => {
    const db = await createTestDatabase({ empty: true });
    const npm = async (script: string) => {
      const child = spawn('npm', ['run', '--silent', script], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: db.url },
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      const [code] = await once(child, 'exit');
      return { code, output };
    };
    try {
      expect(await npm('migration:run')).toMatchObject({ code: 0 });
      const client = await db.client();
      expect(await appliedMigrations(client)).toEqual(MIGRATION_NAMES);
      // The newest migration builds its index CONCURRENTLY: its revert must run outside a
      // transaction too.
      expect(await npm('migration:revert')).toMatchObject({ code: 0 });
      expect(await appliedMigrations(client)).toEqual(MIGRATION_NAMES.slice(0, -1));
    } finally {
      await db.drop();
    }
  }, 60_000);

  describe('schema', () => {
    let db: TestDatabase;
    let client: Client;
    beforeAll(async () => {
      db = await createTestDatabase();
      client = await db.client();
    });
    afterAll(() => db.drop());

    it('keeps ids in byte order ("C") with a partial index on alive ids', async () => {
      const { rows: columns } = await client.query(
        `SELECT collation_name FROM information_schema.columns
          WHERE table_name = 'kb_documents' AND column_name = 'document_id'`,
      );
      expect(columns).toEqual([{ collation_name: 'C' }]);
      const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
        `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'kb_documents'`,
      );
      const definition = (name: string) => indexes.find((i) => i.indexname === name)?.indexdef;
      expect(definition('kb_documents_alive_id')).toMatch(
        /\(document_id\) WHERE \(deleted_at IS NULL\)$/,
      );
      expect(definition('kb_documents_vector_pending_order')).toMatch(
        /\(vector_queued_at, document_id\) WHERE \(vector_status = 'pending'::text\)$/,
      );
      expect(definition('kb_documents_vector_pending')).toBeUndefined();
    });

    it.each([
      ['an unknown vector_status', `vector_status = 'bogus'`],
      ['a revision below 1', `revision = 0`],
      ['metadata that is not an object', `metadata = '[1]'`],
      ['an id over 512 bytes', `document_id = repeat('x', 513)`],
      ['an empty id', `document_id = ''`],
    ])('refuses %s', async (_label, assignment) => {
      await client.query(
        `INSERT INTO kb_documents (document_id, body, content_hash) VALUES ('schema/doc.md', 'b', 'h')
         ON CONFLICT DO NOTHING`,
      );
      await expect(
        client.query(`UPDATE kb_documents SET ${assignment} WHERE document_id = 'schema/doc.md'`),
      ).rejects.toThrow(/violates check constraint/);
    });
  });
});
