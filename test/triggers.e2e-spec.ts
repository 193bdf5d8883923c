import { Client, Notification } from 'pg';
import request from 'supertest';
import { auditOf, createDocument, idPath, snapshotsOf } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';

const CHANNEL = 'kb_vector_sync';

/** Notifications of one LISTEN connection, in arrival order. */
class Inbox {
  private readonly queue: Notification[] = [];
  private readonly waiters: Array<(notification: Notification) => void> = [];

  constructor(client: Client) {
    client.on('notification', (notification) => {
      const waiter = this.waiters.shift();
      if (waiter) waiter(notification);
      else this.queue.push(notification);
    });
  }

  /** The next notification; fails after `ms` so a missing one reads as such, not as a hang. */
  next(ms = 5000): Promise<Notification> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`no ${CHANNEL} notification within ${ms} ms`));
      }, ms);
      const waiter = (notification: Notification) => {
        clearTimeout(timer);
        resolve(notification);
      };
      this.waiters.push(waiter);
    });
  }

  async nextPayload(): Promise<unknown> {
    const notification = await this.next();
    expect(notification.channel).toBe(CHANNEL);
    return notification.payload?.startsWith('{')
      ? JSON.parse(notification.payload)
      : notification.payload;
  }
}

describe('triggers', () => {
  let t: TestApp;
  let db: Client;
  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
  });
  afterAll(() => t.close());

  async function insertRaw(id: string, body = 'body'): Promise<void> {
    await db.query(
      `INSERT INTO kb_documents (document_id, body, content_hash) VALUES ($1, $2, 'h')`,
      [id, body],
    );
  }

  async function row(id: string): Promise<Record<string, unknown>> {
    const { rows } = await db.query(`SELECT * FROM kb_documents WHERE document_id = $1`, [id]);
    return rows[0];
  }

  describe('audit', () => {
    it('records every write with its operation, revision and the actor of app.actor', async () => {
      const id = 'audit/raw.md';
      await db.query('BEGIN');
      await db.query(`SELECT set_config('app.actor', 'alice', true)`);
      await insertRaw(id);
      await db.query('COMMIT');
      await db.query('BEGIN');
      await db.query(`SELECT set_config('app.actor', 'bob', true)`);
      await db.query(
        `UPDATE kb_documents SET body = 'v2', revision = revision + 1 WHERE document_id = $1`,
        [id],
      );
      await db.query(
        `UPDATE kb_documents SET deleted_at = now(), revision = revision + 1 WHERE document_id = $1`,
        [id],
      );
      await db.query('COMMIT');
      // app.actor is transaction-local: without it the database user is the actor.
      await db.query(
        `UPDATE kb_documents SET deleted_at = NULL, revision = revision + 1 WHERE document_id = $1`,
        [id],
      );
      await db.query(`DELETE FROM kb_documents WHERE document_id = $1`, [id]);
      expect(await auditOf(db, id)).toEqual([
        { operation: 'create', revision: 1, actor: 'alice' },
        { operation: 'update', revision: 2, actor: 'bob' },
        { operation: 'delete', revision: 3, actor: 'bob' },
        { operation: 'restore', revision: 4, actor: 'postgres' },
        { operation: 'purge', revision: 4, actor: 'postgres' },
      ]);
    });

    it('records REST writes with the request actor', async () => {
      const document = await createDocument(t, { body: 'one' });
      await request(t.baseUrl).put(idPath(document.document_id)).send({ body: 'two' }).expect(200);
      await request(t.baseUrl).delete(idPath(document.document_id)).expect(200);
      expect(await auditOf(db, document.document_id)).toEqual([
        { operation: 'create', revision: 1, actor: 'local' },
        { operation: 'update', revision: 2, actor: 'local' },
        { operation: 'delete', revision: 3, actor: 'local' },
      ]);
    });
  });

  describe('snapshots', () => {
    it('copies the old version before a change of body, title, tags, metadata or deleted_at', async () => {
      const id = 'snap/each-column.md';
      await insertRaw(id, 'v1');
      for (const change of [
        `body = 'v2'`,
        `title = 'new title'`,
        `tags = '{a}'`,
        `metadata = '{"k": 1}'`,
        `deleted_at = now()`,
      ]) {
        await db.query(
          `UPDATE kb_documents SET ${change}, revision = revision + 1 WHERE document_id = $1`,
          [id],
        );
      }
      const snapshots = await snapshotsOf(db, id);
      expect(snapshots.map((s) => [s.revision, s.body, s.reason])).toEqual([
        [1, 'v1', 'update'],
        [2, 'v2', 'update'],
        [3, 'v2', 'update'],
        [4, 'v2', 'update'],
        // Setting deleted_at is a (soft) delete.
        [5, 'v2', 'delete'],
      ]);
    });

    it('copies the row before a hard delete', async () => {
      const id = 'snap/purged.md';
      await insertRaw(id, 'last words');
      await db.query(`DELETE FROM kb_documents WHERE document_id = $1`, [id]);
      expect((await snapshotsOf(db, id)).map((s) => [s.revision, s.body, s.reason])).toEqual([
        [1, 'last words', 'delete'],
      ]);
    });
  });

  describe('touch', () => {
    it('maintains updated_at and hands a content change back to the sync pipeline', async () => {
      const id = 'touch/doc.md';
      await insertRaw(id);
      await db.query(
        `UPDATE kb_documents
            SET vector_status = 'error', vector_attempts = 3, vector_error = 'boom',
                vector_claimed_at = now(), vector_queued_at = NULL,
                updated_at = now() - interval '1 hour', created_at = now() - interval '1 hour'
          WHERE document_id = $1`,
        [id],
      );
      const stale = await row(id);
      expect(stale).toMatchObject({ vector_status: 'error', vector_attempts: 3 });

      await db.query(
        `UPDATE kb_documents SET body = 'changed', revision = revision + 1 WHERE document_id = $1`,
        [id],
      );
      const touched = await row(id);
      expect(touched).toMatchObject({
        vector_status: 'pending',
        vector_attempts: 0,
        vector_error: null,
        vector_claimed_at: null,
      });
      expect(touched.vector_queued_at).not.toBeNull();
      expect((touched.updated_at as Date).getTime()).toBeGreaterThan(
        (stale.updated_at as Date).getTime() + 30 * 60 * 1000,
      );
      expect(touched.created_at).toEqual(stale.created_at);
    });

    it('leaves revision, audit, snapshots and updated_at alone on a vector_*-only update', async () => {
      const id = 'touch/vector-only.md';
      await insertRaw(id);
      const before = await row(id);
      await db.query(
        `UPDATE kb_documents
            SET vector_status = 'ready', vector_revision = revision, vector_claimed_at = NULL
          WHERE document_id = $1`,
        [id],
      );
      const after = await row(id);
      expect(after).toMatchObject({ vector_status: 'ready', vector_revision: 1, revision: 1 });
      expect(after.updated_at).toEqual(before.updated_at);
      expect(await auditOf(db, id)).toHaveLength(1);
      expect(await snapshotsOf(db, id)).toEqual([]);
    });
  });

  describe('truncation guard', () => {
    it('refuses TRUNCATE kb_documents and keeps the rows', async () => {
      await insertRaw('truncate/survivor.md');
      // A table referencing kb_documents (the vector store's) may refuse the plain form
      // first; CASCADE passes that check and reaches the guard.
      await expect(db.query('TRUNCATE kb_documents')).rejects.toThrow(
        /TRUNCATE of kb_documents is refused|referenced in a foreign key/,
      );
      await expect(db.query('TRUNCATE kb_documents CASCADE')).rejects.toThrow(
        /TRUNCATE of kb_documents is refused/,
      );
      expect(await row('truncate/survivor.md')).toBeDefined();
    });
  });

  describe(`NOTIFY ${CHANNEL}`, () => {
    let listener: Client;
    let inbox: Inbox;
    beforeAll(async () => {
      listener = await t.db.client();
      inbox = new Inbox(listener);
      await listener.query(`LISTEN ${CHANNEL}`);
    });

    /**
     * Proves that nothing was notified since the last notification read: a marker NOTIFY
     * sent now must be the very next one (notifications arrive in commit order).
     */
    async function expectNothingNotified(): Promise<void> {
      await db.query(`SELECT pg_notify($1, 'marker')`, [CHANNEL]);
      expect(await inbox.nextPayload()).toBe('marker');
    }

    it('notifies insert, body change, soft delete, restore and hard delete with the revision', async () => {
      const id = 'notify/rest.md';
      await createDocument(t, { document_id: id, body: 'one' });
      expect(await inbox.nextPayload()).toEqual({ op: 'insert', document_id: id, revision: 1 });

      await request(t.baseUrl).put(idPath(id)).send({ body: 'two' }).expect(200);
      expect(await inbox.nextPayload()).toEqual({ op: 'update', document_id: id, revision: 2 });

      await request(t.baseUrl)
        .put(idPath(id))
        .send({ metadata: { k: 1 } })
        .expect(200);
      expect(await inbox.nextPayload()).toEqual({ op: 'update', document_id: id, revision: 3 });

      await request(t.baseUrl).delete(idPath(id)).expect(200);
      expect(await inbox.nextPayload()).toEqual({ op: 'update', document_id: id, revision: 4 });

      await request(t.baseUrl)
        .post(`${idPath(id)}/restore`)
        .expect(200);
      expect(await inbox.nextPayload()).toEqual({ op: 'update', document_id: id, revision: 5 });

      await db.query(`DELETE FROM kb_documents WHERE document_id = $1`, [id]);
      expect(await inbox.nextPayload()).toEqual({ op: 'delete', document_id: id, revision: 5 });
      await expectNothingNotified();
    });

    it('stays silent on a vector_*-only update', async () => {
      const id = 'notify/vector-only.md';
      await insertRaw(id);
      expect(await inbox.nextPayload()).toMatchObject({ op: 'insert', document_id: id });
      await db.query(
        `UPDATE kb_documents
            SET vector_status = 'ready', vector_revision = revision, vector_attempts = 1,
                vector_error = NULL, vector_claimed_at = now(), vector_queued_at = NULL
          WHERE document_id = $1`,
        [id],
      );
      await expectNothingNotified();
      // The same check sees a real change: the marker is not what comes next.
      await db.query(`UPDATE kb_documents SET body = 'new' WHERE document_id = $1`, [id]);
      await db.query(`SELECT pg_notify($1, 'marker')`, [CHANNEL]);
      expect(await inbox.nextPayload()).toMatchObject({ op: 'update', document_id: id });
      expect(await inbox.nextPayload()).toBe('marker');
    });

    it('stays silent on a no-op update and on a rolled-back change', async () => {
      const document = await createDocument(t, { body: 'same' });
      expect(await inbox.nextPayload()).toMatchObject({ op: 'insert' });
      await request(t.baseUrl).put(idPath(document.document_id)).send({ body: 'same' }).expect(200);
      await db.query('BEGIN');
      await db.query(`UPDATE kb_documents SET body = 'rolled back' WHERE document_id = $1`, [
        document.document_id,
      ]);
      await db.query('ROLLBACK');
      await expectNothingNotified();
    });
  });
});
