import type { Client } from 'pg';
import { gunzipSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { DERIVED_COLUMNS, DERIVED_TABLES, KEPT_TABLES } from '../src/backup/backup-tables';
import { idPath, insertIds } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';
import { waitFor } from './support/wait';

type Json = Record<string, unknown>;

/** `GET /admin/backup` whole, as bytes. */
async function takeBackup(t: TestApp, headers: Record<string, string> = {}): Promise<Buffer> {
  const answer = await fetch(`${t.baseUrl}/admin/backup`, { headers });
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toBe('application/gzip');
  return Buffer.from(await answer.arrayBuffer());
}

async function restore(t: TestApp, backup: Buffer): Promise<{ status: number; body: Json }> {
  const answer = await fetch(`${t.baseUrl}/admin/restore`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/gzip' },
    body: backup,
  });
  return { status: answer.status, body: (await answer.json()) as Json };
}

/** Row counts of the tables a backup keeps. */
async function keptCounts(sql: Client): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const { name } of KEPT_TABLES) {
    counts[name] = Number((await sql.query(`SELECT count(*) AS n FROM ${name}`)).rows[0].n);
  }
  return counts;
}

const auditRows = async (sql: Client) =>
  (
    await sql.query<{ id: string } & Json>(
      `SELECT id, operation, document_id, revision, actor, at FROM kb_audit ORDER BY id`,
    )
  ).rows;

/** The whole change feed, newest first, page by page. */
async function wholeFeed(t: TestApp): Promise<Json[]> {
  const changes: Json[] = [];
  let cursor: string | null = null;
  do {
    const page: { changes: Json[]; next_cursor: string | null } = (
      await request(t.baseUrl)
        .get('/documents/changes')
        .query({ limit: 500, ...(cursor === null ? {} : { cursor }) })
        .expect(200)
    ).body;
    changes.push(...page.changes);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return changes;
}

/**
 * `GET /admin/backup` and `POST /admin/restore` (docs/operations.md, Backup and restore):
 * an online backup restored into a new database holds every acknowledged write, its history
 * and audit trail as they were; a cut or corrupt backup and a database that is not empty are
 * refused with nothing written.
 */
describe('backup and restore', () => {
  let source: TestApp;
  let sourceSql: Client;

  beforeAll(async () => {
    source = await startTestApp();
    sourceSql = await source.db.client();
    // Enough rows that the backup takes a while as the writers go on.
    await insertIds(
      sourceSql,
      Array.from({ length: 3000 }, (_, i) => `seed/${i % 30}/doc-${i}.md`),
    );
    await insertIds(sourceSql, ['seed/gone/old.md'], true);
    await request(source.baseUrl)
      .post('/documents')
      .send({ document_id: 'seed/linking.md', body: 'To [[doc-7]] and [seven](7/doc-7.md).' })
      .expect(201);
  });
  afterAll(() => source.close());

  it('accounts for every table and column of the schema: kept or derived', async () => {
    const { rows } = await sourceSql.query<{ table_name: string; column_name: string }>(
      `SELECT c.table_name, c.column_name FROM information_schema.columns c
         JOIN information_schema.tables t USING (table_schema, table_name)
        WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`,
    );
    const unaccounted = rows.filter(({ table_name, column_name }) => {
      const kept = KEPT_TABLES.find((t) => t.name === table_name);
      if (kept) {
        return (
          !kept.columns.includes(column_name) &&
          !(DERIVED_COLUMNS[table_name] ?? []).includes(column_name)
        );
      }
      return !(table_name in DERIVED_TABLES);
    });
    expect(unaccounted).toEqual([]);
  });

  it('restores into a new database what 8 writers had written when it began, consistently', async () => {
    // Writes acknowledged so far: document id → revisions.
    const acknowledged = new Map<string, number[]>();
    const deleted = new Set<string>();
    let stop = false;
    let began = false;
    let writesAfterBegin = 0;
    const writer = async (w: number) => {
      for (let n = 0; !stop; n++) {
        const id = `writers/w${w}/doc-${n}.md`;
        const created = await request(source.baseUrl)
          .post('/documents')
          .send({ document_id: id, body: `# W${w} ${n}\n\nzebrafinch${w}x${n} first` })
          .expect(201);
        acknowledged.set(id, [created.body.revision]);
        const updated = await request(source.baseUrl)
          .put(idPath(id))
          .send({ body: `# W${w} ${n}\n\nzebrafinch${w}x${n} second` })
          .expect(200);
        acknowledged.get(id)!.push(updated.body.revision);
        if (n % 3 === 0) {
          await request(source.baseUrl).delete(idPath(id)).expect(200);
          deleted.add(id);
        }
        if (began) writesAfterBegin++;
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    await new Promise((resolve) => setTimeout(resolve, 1500));

    // What was acknowledged, and visible, before the backup began.
    const before = new Map([...acknowledged].map(([id, revisions]) => [id, [...revisions]]));
    const deletedBefore = new Set(deleted);
    const visibleBefore = new Set((await auditRows(sourceSql)).map((row) => row.id));
    began = true;
    const backup = await takeBackup(source);
    stop = true;
    await Promise.all(writers);
    expect(writesAfterBegin).toBeGreaterThan(0);

    const target = await startTestApp({ VECTOR_SYNC_ENABLED: 'true' });
    try {
      const targetSql = await target.db.client();
      const answer = await restore(target, backup);
      expect(answer.status).toBe(200);
      const auditThrough = answer.body.audit_through as number;
      expect(answer.body.restored).toEqual(await keptCounts(targetSql));
      expect(answer.body.lexically_indexed).toBeGreaterThan(3000);

      // Every acknowledged write is there with its history, deleted ones stay deleted.
      for (const [id, revisions] of before) {
        const { rows } = await targetSql.query<{ revision: number }>(
          `SELECT revision FROM kb_documents WHERE document_id = $1
           UNION SELECT revision FROM kb_document_snapshots WHERE document_id = $1`,
          [id],
        );
        expect(rows.map((r) => r.revision)).toEqual(expect.arrayContaining(revisions));
      }
      for (const id of deletedBefore) {
        await request(target.baseUrl).get(idPath(id)).expect(404);
        const history = await request(target.baseUrl)
          .get(`${idPath(id)}/history`)
          .expect(200);
        expect(history.body.items.length).toBeGreaterThan(0);
      }
      await request(target.baseUrl).get(idPath('seed/gone/old.md')).expect(404);
      // Links are derived again: every restored document is read for them, in the background.
      await waitFor(
        async () =>
          (await targetSql.query(`SELECT 1 FROM kb_links_pending LIMIT 1`)).rows.length === 0,
        'the links of the restored documents to be read',
        { timeoutMs: 60_000 },
      );
      const backlinks = await request(target.baseUrl)
        .get(`${idPath('seed/7/doc-7.md')}/backlinks`)
        .expect(200);
      expect(backlinks.body.backlinks).toEqual([
        expect.objectContaining({ document_id: 'seed/linking.md', links: 2 }),
      ]);

      // The audit trail: the same rows under the same ids, up to the snapshot's highest id;
      // every row visible before the backup began is among them; only rows of writes in flight
      // at that moment (one per writer at most) may be missing below it.
      const restored = await auditRows(targetSql);
      const original = await auditRows(sourceSql);
      const originalById = new Map(original.map((row) => [row.id, row]));
      for (const row of restored) expect(row).toEqual(originalById.get(row.id));
      expect(Number(restored[restored.length - 1].id)).toBe(auditThrough);
      const restoredIds = new Set(restored.map((row) => row.id));
      for (const id of visibleBefore) expect(restoredIds.has(id)).toBe(true);
      const missing = original.filter(
        (r) => Number(r.id) <= auditThrough && !restoredIds.has(r.id),
      );
      expect(missing.length).toBeLessThanOrEqual(8);
      expect(original.length).toBeGreaterThan(restored.length);

      // One snapshot: each document is at the revision of its latest restored audit row.
      const { rows: behind } = await targetSql.query(
        `SELECT d.document_id, d.revision, a.revision AS audited
           FROM kb_documents d
           JOIN (SELECT document_id, max(revision) AS revision FROM kb_audit GROUP BY document_id) a
             USING (document_id)
          WHERE d.revision <> a.revision`,
      );
      expect(behind).toEqual([]);

      // The change feed gives the same entries.
      const feed = await wholeFeed(target);
      const originalFeed = new Map((await wholeFeed(source)).map((c) => [c.id, c]));
      expect(feed.length).toBe(restored.length);
      for (const change of feed) expect(change).toEqual(originalFeed.get(change.id));

      // Lexical search finds a restored document right away.
      const [someId] = [...before.keys()].filter((id) => !deletedBefore.has(id));
      const [, w, n] = /w(\d+)\/doc-(\d+)/.exec(someId)!;
      const search = await request(target.baseUrl)
        .get('/search')
        .query({ query: `zebrafinch${w}x${n}`, mode: 'lexical' })
        .expect(200);
      expect(search.body.results[0].document_id).toBe(someId);

      // The sequences go on after the restored ids; the folder counts are those of the rows.
      const created = await request(target.baseUrl)
        .post('/documents')
        .send({ document_id: 'after/restore.md', body: 'written after' })
        .expect(201);
      expect(created.body.revision).toBe(1);
      const { rows: last } = await targetSql.query(`SELECT max(id) AS id FROM kb_audit`);
      expect(Number(last[0].id)).toBe(auditThrough + 1);
      const folders = await request(target.baseUrl)
        .get('/documents/folders')
        .query({ parent: 'seed' })
        .expect(200);
      expect(folders.body.folders).toHaveLength(30);
      for (const folder of folders.body.folders) expect(folder.documents).toBe(100);
    } finally {
      await target.close();
    }
  }, 120_000);

  describe('refusals', () => {
    let target: TestApp;
    let targetSql: Client;
    let backup: Buffer;

    beforeAll(async () => {
      backup = await takeBackup(source);
      target = await startTestApp();
      targetSql = await target.db.client();
    });
    afterAll(() => target.close());

    const expectEmpty = async () =>
      expect(Object.values(await keptCounts(targetSql)).every((n) => n === 0)).toBe(true);

    it('refuses a backup cut at half its bytes, and writes nothing', async () => {
      const answer = await restore(target, backup.subarray(0, backup.length >> 1));
      expect(answer.status).toBe(422);
      expect(answer.body).toEqual({
        error: { code: 'INVALID_BACKUP', message: expect.stringMatching(/cut short/) },
      });
      await expectEmpty();
    });

    it('says a body that is not gzip is not a backup, and writes nothing', async () => {
      const answer = await restore(target, Buffer.from('id,title\n1,a spreadsheet\n'));
      expect(answer.status).toBe(422);
      expect(answer.body).toEqual({
        error: {
          code: 'INVALID_BACKUP',
          message: 'this is not an Agent Data backup (not gzip)',
        },
      });
      await expectEmpty();
    });

    it('refuses a backup with a byte corrupted in the middle, and writes nothing', async () => {
      const corrupt = Buffer.from(backup);
      corrupt[corrupt.length >> 1] ^= 0x40;
      const answer = await restore(target, corrupt);
      expect(answer.status).toBe(422);
      expect((answer.body.error as Json).code).toBe('INVALID_BACKUP');
      await expectEmpty();
    });

    it('refuses a backup whose rows were changed though it is whole gzip', async () => {
      const text = gunzipSync(backup)
        .toString('utf8')
        .replace('seed/0/doc-0.md', 'seed/0/doc-X.md');
      const answer = await restore(target, gzipSync(text));
      expect(answer.status).toBe(422);
      expect((answer.body.error as Json).message).toMatch(
        /table kb_documents does not match its checksum/,
      );
      await expectEmpty();
    });

    it('refuses a backup without its manifest', async () => {
      const text = gunzipSync(backup).toString('utf8');
      const answer = await restore(target, gzipSync(text.slice(0, text.lastIndexOf('MANIFEST '))));
      expect(answer.status).toBe(422);
      expect((answer.body.error as Json).message).toMatch(/ends before its manifest/);
      await expectEmpty();
    });

    it('refuses a backup of a newer schema', async () => {
      const text = gunzipSync(backup)
        .toString('utf8')
        .replace(/"schema":"[A-Za-z]+\d{13}"/, '"schema":"Later9999999999999"');
      const answer = await restore(target, gzipSync(text));
      expect(answer.status).toBe(422);
      expect((answer.body.error as Json).message).toMatch(/newer schema \(Later9999999999999\)/);
      await expectEmpty();
    });

    it('refuses to restore into a knowledge base that is not empty, naming what it found', async () => {
      await request(target.baseUrl)
        .post('/documents')
        .send({ document_id: 'here/already.md', body: 'x' })
        .expect(201);
      const before = await keptCounts(targetSql);
      const answer = await restore(target, backup);
      expect(answer.status).toBe(409);
      expect(answer.body.error).toEqual({
        code: 'NOT_EMPTY',
        message:
          'the knowledge base is not empty (documents, audit rows found): a backup is restored only into an empty one',
        found: ['kb_documents', 'kb_audit'],
      });
      expect(await keptCounts(targetSql)).toEqual(before);
    });
  });

  describe('access', () => {
    const ADMIN = 'backup-admin-0123456789abcdef';
    const TEAM = 'backup-team-0123456789abcdef';
    const READER = 'backup-reader-0123456789abcdef';
    let guarded: TestApp;

    beforeAll(async () => {
      guarded = await startTestApp({
        API_KEYS: `admin:${ADMIN}:admin;team:${TEAM}:admin;reader:${READER}:readonly`,
        ACCESS_POLICY: JSON.stringify({
          rules: [
            { who: ['key:admin'], read: '*', write: '*' },
            { who: ['key:team'], read: ['team/'], write: ['team/'] },
            { who: ['key:reader'], read: '*' },
          ],
        }),
      });
      for (const [id, body] of [
        ['secret/plan.md', 'the launch codes are 0000'],
        ['team/notes.md', 'team notes'],
      ]) {
        await request(guarded.baseUrl)
          .post('/documents')
          .set('X-API-Key', ADMIN)
          .send({ document_id: id, body })
          .expect(201);
      }
    });
    afterAll(() => guarded.close());

    it('refuses a backup to an admin who may read only some folders, and shows nothing of a document', async () => {
      const answer = await request(guarded.baseUrl).get('/admin/backup').set('X-API-Key', TEAM);
      expect(answer.status).toBe(403);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.body.error.code).toBe('PERMISSION_DENIED');
      expect(answer.body.error.message).toMatch(/needs read access to all of them/);
      expect(answer.text).not.toMatch(/secret|launch|team\/notes/);
    });

    it('refuses a backup to a key without the admin profile', async () => {
      const answer = await request(guarded.baseUrl).get('/admin/backup').set('X-API-Key', READER);
      expect(answer.status).toBe(403);
      expect(answer.body.error.code).toBe('FORBIDDEN');
      expect(answer.text).not.toMatch(/secret|launch/);
    });

    it('refuses a restore to an admin who may write only some folders', async () => {
      const backup = await takeBackup(guarded, { 'X-API-Key': ADMIN });
      expect(gunzipSync(backup).toString('utf8')).toContain('the launch codes are 0000');
      const answer = await fetch(`${guarded.baseUrl}/admin/restore`, {
        method: 'POST',
        headers: { 'X-API-Key': TEAM, 'Content-Type': 'application/gzip' },
        body: backup,
      });
      expect(answer.status).toBe(403);
      const body = (await answer.json()) as { error: Json };
      expect(body.error.code).toBe('PERMISSION_DENIED');
      expect(body.error.message).toMatch(/needs write access to all of them/);
    });
  });
});
