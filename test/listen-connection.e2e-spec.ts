import type { Client } from 'pg';
import request from 'supertest';
import {
  type ChannelHandlers,
  LISTEN_APPLICATION_NAME,
  ListenConnection,
} from '../src/database/listen-connection';
import {
  type DocumentChange,
  DocumentChangesListener,
} from '../src/documents/document-changes.listener';
import { VectorSyncListener } from '../src/vectors/sync/vector-sync.listener';
import { startTestApp, type TestApp } from './support/app';
import { createTestDatabase, type TestDatabase } from './support/database';
import { waitFor } from './support/wait';

/** The backends of the LISTEN connection, by pid. */
async function listeners(sql: Client): Promise<number[]> {
  const found = await sql.query(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
    [LISTEN_APPLICATION_NAME],
  );
  return found.rows.map((row: { pid: number }) => row.pid);
}

/** What a channel's consumer was told, in order. */
function recorder(): ChannelHandlers & { heard: string[] } {
  const heard: string[] = [];
  return {
    heard,
    notification: (payload) => heard.push(`notification ${payload}`),
    listening: () => heard.push('listening'),
    lost: () => heard.push('lost'),
  };
}

describe('the shared LISTEN connection', () => {
  let db: TestDatabase;
  let sql: Client;
  let connection: ListenConnection | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    sql = await db.client();
  });
  afterEach(async () => connection?.onApplicationShutdown());
  afterAll(async () => db?.drop());

  it('carries several channels on one connection, and after pg_terminate_backend reconnects, tells each consumer, and delivers what comes after', async () => {
    connection = new ListenConnection(db.url);
    const one = recorder();
    const two = recorder();
    await expect(connection.listen('test_one', one)).resolves.toBe(true);
    await expect(connection.listen('test_two', two)).resolves.toBe(true);
    const [pid, ...more] = await listeners(sql);
    expect(more).toEqual([]);
    await sql.query(`SELECT pg_notify('test_one', 'a'), pg_notify('test_two', 'b')`);
    await waitFor(
      () => one.heard.length === 2 && two.heard.length === 2,
      'the first notifications',
    );
    expect(one.heard).toEqual(['listening', 'notification a']);
    expect(two.heard).toEqual(['listening', 'notification b']);

    await sql.query('SELECT pg_terminate_backend($1)', [pid]);
    await waitFor(
      () => one.heard.at(-1) === 'listening' && two.heard.at(-1) === 'listening',
      'both channels listened again',
    );
    expect(one.heard.slice(2)).toEqual(['lost', 'listening']);
    expect(two.heard.slice(2)).toEqual(['lost', 'listening']);
    const [newPid, ...others] = await listeners(sql);
    expect(others).toEqual([]);
    expect(newPid).not.toBe(pid);
    expect(connection.state).toMatchObject({ up: true, reconnects: 1 });

    await sql.query(`SELECT pg_notify('test_one', 'c'), pg_notify('test_two', 'd')`);
    await waitFor(
      () => one.heard.length === 5 && two.heard.length === 5,
      'the later notifications',
    );
    expect(one.heard.at(-1)).toBe('notification c');
    expect(two.heard.at(-1)).toBe('notification d');

    // The last channel closes the connection.
    await connection.unlisten('test_one');
    expect(await listeners(sql)).toHaveLength(1);
    await connection.unlisten('test_two');
    await waitFor(async () => (await listeners(sql)).length === 0, 'the connection to close');
    expect(connection.state.up).toBe(false);
  });

  it('resolves false when the database cannot be reached, naming why, and tells the consumer nothing', async () => {
    const unreachable = new URL(db.url);
    unreachable.pathname = '/no_such_database';
    connection = new ListenConnection(unreachable.toString());
    const one = recorder();
    await expect(connection.listen('test_one', one)).resolves.toBe(false);
    expect(connection.state).toMatchObject({ up: false, last_error: expect.any(String) });
    expect(one.heard).toEqual([]);
  });
});

describe('one LISTEN connection per process, for the vector pipeline and change notifications', () => {
  let t: TestApp;
  let sql: Client;

  beforeAll(async () => {
    t = await startTestApp({ VECTOR_SYNC_ENABLED: 'true' });
    sql = await t.db.client();
  });
  afterAll(async () => t?.close());

  it('carries both channels; a terminated backend interrupts observers, and both channels work after', async () => {
    const changes = t.app.get(DocumentChangesListener);
    const heard: DocumentChange[] = [];
    let interrupted = 0;
    const observer = {
      change: (c: DocumentChange) => heard.push(c),
      interrupted: () => interrupted++,
    };
    await changes.observe(observer);
    const [pid, ...more] = await listeners(sql);
    expect(more).toEqual([]);
    expect(t.app.get(VectorSyncListener).state.up).toBe(true);

    await sql.query('SELECT pg_terminate_backend($1)', [pid]);
    await waitFor(() => interrupted === 1, 'the observer to be told');
    await waitFor(() => t.app.get(VectorSyncListener).state.up, 'the vector listener back up');

    heard.length = 0;
    await changes.observe(observer);
    await request(t.baseUrl)
      .post('/documents')
      .send({ document_id: 'after/kill.md', body: 'b' })
      .expect(201);
    await waitFor(
      () => heard.some((c) => c.documentId === 'after/kill.md'),
      'the change after the kill',
    );
    expect(await listeners(sql)).toHaveLength(1);
    expect(t.app.get(VectorSyncListener).state).toMatchObject({ up: true, reconnects: 1 });
  });
});
