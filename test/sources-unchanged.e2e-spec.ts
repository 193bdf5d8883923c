import { copyFile, mkdir, mkdtemp, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import request from 'supertest';
import { TestRepository } from '../src/sources/connectors/git/git-repository.testing';
import { idPath } from './documents-helpers';
import { startTestApp, type TestApp } from './support/app';
import { html, startLoopbackSite, type LoopbackSite } from './support/loopback-site';
import { sourceRunEnded } from './support/source-runs';
import { waitFor } from './support/wait';

/**
 * A source that reads an original again and finds the same content writes nothing: no
 * revision, no audit row, no change notification, whatever the reading recorded of when it
 * looked (`fetched_at`, the original's version stamp). Each kind is made to read unchanged
 * content again the way it happens for real: a folder declared on files written a moment ago
 * (read again by the run its watch makes when it starts), a file touched, files restored from
 * a file backup (new inodes) under a server restored from a backup, a git run cut between its
 * writes and their record, a site redeployed with new ETags. A real change still makes exactly
 * one revision. docs/sources.md, "Documents a source owns".
 */
const KEY = 'sources-unchanged-key-0123456789abcdef';
const AS = { 'X-API-Key': KEY };

type Run = {
  id: string;
  trigger: string;
  status: string;
  counts: Record<string, number>;
  message: string | null;
};
type Doc = { revision: number; content_hash: string; metadata: Record<string, unknown> };

/** A server's view of one database: its sources' runs, documents, audit rows and notifications. */
class Observer {
  /** `op document_id` of every change notification heard, in order. */
  readonly heard: string[] = [];
  private sentinels = 0;

  private constructor(
    private readonly t: TestApp,
    readonly sql: Client,
  ) {}

  /** Listens on the database's change notifications from now on. */
  static async of(t: TestApp): Promise<Observer> {
    const sql = await t.db.client();
    const observer = new Observer(t, sql);
    sql.on('notification', ({ payload }) => {
      const { op, document_id } = JSON.parse(payload ?? '{}') as Record<string, string>;
      observer.heard.push(`${op} ${document_id}`);
    });
    await sql.query('LISTEN kb_document_changes');
    return observer;
  }

  get(path: string) {
    return request(this.t.baseUrl).get(path).set(AS);
  }

  async document(id: string): Promise<Doc> {
    return (await this.get(idPath(id)).expect(200)).body as Doc;
  }

  /** The revisions of the documents under `prefix`, by id. */
  async revisions(prefix: string): Promise<Record<string, number>> {
    const { rows } = await this.sql.query<{ document_id: string; revision: number }>(
      `SELECT document_id, revision FROM kb_documents WHERE document_id LIKE $1 || '%'`,
      [prefix],
    );
    return Object.fromEntries(rows.map((row) => [row.document_id, row.revision]));
  }

  /** `operation document_id` of the audit rows under `prefix`, oldest first. */
  async audit(prefix: string): Promise<string[]> {
    const { rows } = await this.sql.query<{ operation: string; document_id: string }>(
      `SELECT operation, document_id FROM kb_audit WHERE document_id LIKE $1 || '%' ORDER BY id`,
      [prefix],
    );
    return rows.map((row) => `${row.operation} ${row.document_id}`);
  }

  /**
   * The notifications heard under `prefix` once every write committed so far has been heard:
   * PostgreSQL delivers notifications in the order their transactions committed, so a
   * sentinel sent now arrives after all of them.
   */
  async notified(prefix: string): Promise<string[]> {
    const sentinel = `sentinel-${++this.sentinels}`;
    await this.sql.query(`SELECT pg_notify('kb_document_changes', $1)`, [
      JSON.stringify({ op: 'sentinel', document_id: sentinel }),
    ]);
    await waitFor(() => this.heard.includes(`sentinel ${sentinel}`), `the ${sentinel}`);
    return this.heard.filter((entry) => entry.split(' ')[1].startsWith(prefix));
  }

  /** The latest run's id of a source ('0' before any): later runs are newer than it. */
  async lastRunId(source: string): Promise<number> {
    const { body } = await this.get(`/sources/${source}/runs?limit=1`).expect(200);
    return Number(body.runs[0]?.id ?? 0);
  }

  /** Waits for the first run of `source` after run `after` that `matches` to end. */
  async ended(
    source: string,
    after: number,
    matches: (run: Run) => boolean = () => true,
    what = 'a run',
  ): Promise<Run> {
    return sourceRunEnded<Run>(
      this.t.baseUrl,
      AS,
      source,
      (r) => Number(r.id) > after && matches(r),
      `${what} of ${source} after run ${after}`,
    );
  }

  /** Waits for the first run of `source` after run `after` that its watch made to end. */
  async watched(source: string, after: number): Promise<Run> {
    return this.ended(source, after, (run) => run.trigger === 'watch', 'a watch run');
  }

  /** Asks for a run and waits for it to end. */
  async sync(source: string): Promise<Run> {
    const { body } = await request(this.t.baseUrl)
      .post(`/sources/${source}/sync`)
      .set(AS)
      .expect(202);
    return this.ended(source, 0, (run) => run.id === body.id, `run ${body.id}`);
  }

  async declare(declaration: Record<string, unknown>): Promise<void> {
    await request(this.t.baseUrl).post('/sources').set(AS).send(declaration).expect(201);
  }
}

/** A file replaced by a copy of itself, as restoring it from a file backup leaves it: the same bytes and modification time, another inode and change time. */
async function restoredFromAFileBackup(path: string): Promise<void> {
  const { atime, mtime } = await stat(path);
  await copyFile(path, `${path}.restoring`);
  await utimes(`${path}.restoring`, atime, mtime);
  await rename(`${path}.restoring`, path);
}

describe('a source reading an unchanged original again writes nothing', () => {
  let t: TestApp;
  let o: Observer;
  let dir: string;
  let repo: TestRepository;
  let site: LoopbackSite;
  /** The site's pages: their HTML and ETag. */
  const pages: Record<string, { body: string; etag: string }> = {
    '/docs/': {
      body: html('Docs', '<main><h1>Docs</h1><a href="/docs/a">A</a></main>'),
      etag: '"docs-1"',
    },
    '/docs/a': { body: html('Alpha', '<main><h1>Alpha</h1><p>Alpha.</p></main>'), etag: '"a-1"' },
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-data-sources-unchanged-'));
    repo = await TestRepository.create();
    await repo.write({
      'guide.md': '---\ntitle: The guide\ntags: [ops]\n---\n# Guide\n\nRestart the lanterns.\n',
      'ops/backup.md': '# Backups\n\nNightly at two.\n',
    });
    await repo.commit('first');
    site = await startLoopbackSite(
      Object.fromEntries(
        Object.keys(pages).map((path) => [
          path,
          (req, res) => {
            const { body, etag } = pages[path];
            if (req.headers['if-none-match'] === etag) return res.writeHead(304).end();
            res.writeHead(200, { 'Content-Type': 'text/html', ETag: etag }).end(body);
          },
        ]),
      ),
    );
    t = await startTestApp({
      API_KEYS: `ops:${KEY}:admin`,
      DATA_DIR: dir,
      INGEST_ALLOW_HTTP: 'true',
      INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
    });
    o = await Observer.of(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
    await repo?.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it('a folder declared on files just written: its watch’s first run and a sync write nothing', async () => {
    const notes = join(dir, 'notes');
    await mkdir(notes);
    await writeFile(join(notes, 'a.md'), '# A\n\nThe first note.\n');
    // A file whose modification time is ahead of this clock (written by a machine whose clock
    // runs ahead, over a share): every listing takes its version as unsettled and reads it.
    await writeFile(join(notes, 'b.md'), '# B\n\nThe second note.\n');
    const ahead = new Date(Date.now() + 60 * 60_000);
    await utimes(join(notes, 'b.md'), ahead, ahead);
    await o.declare({ id: 'notes', kind: 'folder', path: notes, mount: 'notes' });
    const first = await o.ended('notes', 0);
    expect(first).toMatchObject({ status: 'succeeded', counts: { created: 2, failed: 0 } });
    const written = {
      a: await o.document('notes/a.md'),
      b: await o.document('notes/b.md'),
    };

    // The watch starts after the first sync, with a run of its own that reads again what was
    // unsettled; a sync asked for after it reads the file ahead of the clock once more.
    const watched = await o.watched('notes', Number(first.id));
    const asked = await o.sync('notes');
    for (const run of [watched, asked]) {
      expect(run.status).toBe('succeeded');
      expect(run.counts).toMatchObject({ created: 0, updated: 0, deleted: 0, unchanged: 2 });
    }
    expect(await o.revisions('notes/')).toEqual({ 'notes/a.md': 1, 'notes/b.md': 1 });
    expect(await o.document('notes/b.md')).toEqual(written.b);
    expect(await o.document('notes/a.md')).toEqual(written.a);
    expect(await o.audit('notes/')).toEqual(['create notes/a.md', 'create notes/b.md']);
    expect((await o.notified('notes/')).sort()).toEqual(['create notes/a.md', 'create notes/b.md']);
  });

  it('a folder’s file touched: the watch fires, the run reads it and writes nothing', async () => {
    const after = await o.lastRunId('notes');
    const now = new Date();
    await utimes(join(dir, 'notes', 'a.md'), now, now);
    const run = await o.watched('notes', after);
    expect(run.counts).toMatchObject({ updated: 0, unchanged: 2 });
    expect(await o.revisions('notes/')).toEqual({ 'notes/a.md': 1, 'notes/b.md': 1 });
    expect(await o.audit('notes/')).toHaveLength(2);
    expect(await o.notified('notes/')).toHaveLength(2);
  });

  it('a folder’s real change makes exactly one revision, with when it was read', async () => {
    const before = await o.document('notes/a.md');
    const after = await o.lastRunId('notes');
    await writeFile(join(dir, 'notes', 'a.md'), '# A\n\nThe first note, edited.\n');
    const run = await o.watched('notes', after);
    expect(run.counts).toMatchObject({ updated: 1 });
    await o.sync('notes');
    const edited = await o.document('notes/a.md');
    expect(edited.revision).toBe(2);
    expect(edited.content_hash).not.toBe(before.content_hash);
    expect(Date.parse(edited.metadata.fetched_at as string)).toBeGreaterThan(
      Date.parse(before.metadata.fetched_at as string),
    );
    expect(edited.metadata.source_version).not.toBe(before.metadata.source_version);
    expect(await o.audit('notes/')).toEqual([
      'create notes/a.md',
      'create notes/b.md',
      'update notes/a.md',
    ]);
    expect(await o.notified('notes/')).toHaveLength(3);
    expect(await o.revisions('notes/')).toEqual({ 'notes/a.md': 2, 'notes/b.md': 1 });
  });

  it('a folder’s file renamed: a move, and one revision naming its new path', async () => {
    const before = await o.document('notes/b.md');
    const after = await o.lastRunId('notes');
    await rename(join(dir, 'notes', 'b.md'), join(dir, 'notes', 'c.md'));
    const run = await o.watched('notes', after);
    expect(run.counts).toMatchObject({ moved: 1, created: 0, deleted: 0 });
    await o.sync('notes');
    const moved = await o.document('notes/c.md');
    expect(moved).toMatchObject({ revision: 2, content_hash: before.content_hash });
    expect(moved.metadata.source_uri).toBe(join(dir, 'notes', 'c.md'));
    expect(await o.revisions('notes/')).toEqual({ 'notes/a.md': 2, 'notes/c.md': 2 });
    expect((await o.audit('notes/')).slice(3)).toEqual([
      'moved-away notes/b.md',
      'move notes/c.md',
      'update notes/c.md',
    ]);
  });

  it('a git run cut between its writes and their record: the next run writes nothing', async () => {
    await o.declare({ id: 'handbook', kind: 'git', url: repo.url, ref: 'main', mount: 'handbook' });
    const first = await o.ended('handbook', 0);
    expect(first).toMatchObject({ status: 'succeeded', counts: { created: 2, failed: 0 } });
    const guide = await o.document('handbook/guide.md');
    // What a first run stopped after its writes leaves: its claims without a version, no cursor.
    await o.sql.query(`UPDATE kb_source_items SET version = NULL WHERE source_id = 'handbook'`);
    await o.sql.query(`UPDATE kb_sources SET cursor = NULL WHERE id = 'handbook'`);
    const again = await o.sync('handbook');
    expect(again.status).toBe('succeeded');
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0, unchanged: 2 });
    expect(await o.document('handbook/guide.md')).toEqual(guide);
    expect(await o.revisions('handbook/')).toEqual({
      'handbook/guide.md': 1,
      'handbook/ops/backup.md': 1,
    });
    expect(await o.audit('handbook/')).toHaveLength(2);
    expect(await o.notified('handbook/')).toHaveLength(2);
    const { rows } = await o.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM kb_source_items
        WHERE source_id = 'handbook' AND version IS NOT NULL`,
    );
    expect(rows[0].n).toBe(2);
  });

  it('a git commit changing a file makes exactly one revision, even if its run is cut', async () => {
    const { rows } = await o.sql.query<{ cursor: string; version: string }>(
      `SELECT s.cursor, i.version FROM kb_sources s JOIN kb_source_items i ON i.source_id = s.id
        WHERE s.id = 'handbook' AND i.key = 'ops/backup.md'`,
    );
    await repo.write({ 'ops/backup.md': '# Backups\n\nNightly at three.\n' });
    await repo.commit('second');
    const run = await o.sync('handbook');
    expect(run.counts).toMatchObject({ updated: 1, unchanged: 1 });
    // The same run cut after its write: its record and the cursor as they were before it.
    await o.sql.query(
      `UPDATE kb_source_items SET version = $1 WHERE source_id = 'handbook' AND key = 'ops/backup.md'`,
      [rows[0].version],
    );
    await o.sql.query(`UPDATE kb_sources SET cursor = $1 WHERE id = 'handbook'`, [rows[0].cursor]);
    const again = await o.sync('handbook');
    expect(again.counts).toMatchObject({ updated: 0, unchanged: 2 });
    expect(await o.revisions('handbook/')).toEqual({
      'handbook/guide.md': 1,
      'handbook/ops/backup.md': 2,
    });
    expect(await o.audit('handbook/')).toHaveLength(3);
    expect(await o.notified('handbook/')).toHaveLength(3);
    // Nothing committed since: the commit tells every file is as it was, and the counts say
    // both files were checked and found unchanged (not "checked 0, unchanged 2").
    const still = await o.sync('handbook');
    expect(still.counts).toMatchObject({ checked: 2, created: 0, updated: 0, unchanged: 2 });
  });

  it('a site redeployed with new ETags and the same pages: the sync writes nothing', async () => {
    await o.declare({ id: 'site', kind: 'web', url: `${site.url}/docs/`, mount: 'site' });
    const first = await o.ended('site', 0);
    expect(first).toMatchObject({ status: 'succeeded', counts: { created: 2, failed: 0 } });
    const alpha = await o.document('site/a.md');
    for (const page of Object.values(pages)) page.etag = page.etag.replace('-1', '-2');
    const before = site.hits.length;
    const again = await o.sync('site');
    // Every page was read again (its ETag no longer matched), and none was written.
    expect(site.hits.slice(before).filter((hit) => hit.path === '/docs/a')).toHaveLength(1);
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0, unchanged: 2 });
    expect(await o.document('site/a.md')).toEqual(alpha);
    expect(await o.revisions('site/')).toEqual({ 'site/a.md': 1, 'site/index.md': 1 });
    expect(await o.audit('site/')).toHaveLength(2);
    expect(await o.notified('site/')).toHaveLength(2);
  });

  it('a site redeployed with one page changed: exactly one revision', async () => {
    pages['/docs/a'] = {
      body: html('Alpha', '<main><h1>Alpha</h1><p>Alpha, changed.</p></main>'),
      etag: '"a-3"',
    };
    pages['/docs/'].etag = '"docs-3"';
    const run = await o.sync('site');
    expect(run.counts).toMatchObject({ updated: 1, unchanged: 1 });
    expect(await o.revisions('site/')).toEqual({ 'site/a.md': 2, 'site/index.md': 1 });
    expect(await o.audit('site/')).toHaveLength(3);
  });
});

describe('a folder source on a server restored from a backup', () => {
  it('syncs again, its files restored from a file backup, and writes nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agent-data-sources-restored-'));
    const notes = join(dir, 'notes');
    await mkdir(notes);
    await writeFile(join(notes, 'a.md'), '# A\n\nThe first note.\n');
    await writeFile(join(notes, 'b.md'), '# B\n\nThe second note.\n');
    const env = { API_KEYS: `ops:${KEY}:admin`, DATA_DIR: dir };
    let backup: Buffer;
    let written: Record<string, Doc>;
    const origin = await startTestApp(env);
    try {
      const o = await Observer.of(origin);
      await o.declare({ id: 'notes', kind: 'folder', path: notes, mount: 'notes' });
      const first = await o.ended('notes', 0);
      expect(first.counts).toMatchObject({ created: 2 });
      // Backed up once its watch's first run is over (it reads again the files just written).
      await o.watched('notes', Number(first.id));
      written = {
        a: await o.document('notes/a.md'),
        b: await o.document('notes/b.md'),
      };
      const answer = await fetch(`${origin.baseUrl}/admin/backup`, { headers: AS });
      expect(answer.status).toBe(200);
      backup = Buffer.from(await answer.arrayBuffer());
    } finally {
      await origin.close();
    }
    // The new machine's copy of the folder: the same files, restored with their times.
    for (const name of ['a.md', 'b.md']) await restoredFromAFileBackup(join(notes, name));

    const target = await startTestApp(env);
    try {
      const restored = await fetch(`${target.baseUrl}/admin/restore`, {
        method: 'POST',
        headers: { ...AS, 'Content-Type': 'application/gzip' },
        body: backup,
      });
      expect(restored.status).toBe(200);
      const o = await Observer.of(target);
      const restoredRun = await o.lastRunId('notes');
      const auditBefore = await o.audit('notes/');
      // The restored source was synced before: watched at once, its watch's run reads what
      // changed since the last run it knows (every file: their inodes are new), then a sync.
      const watched = await o.watched('notes', restoredRun);
      const asked = await o.sync('notes');
      for (const run of [watched, asked]) {
        expect(run.status).toBe('succeeded');
        expect(run.counts).toMatchObject({ created: 0, updated: 0, deleted: 0, unchanged: 2 });
      }
      expect(await o.document('notes/a.md')).toEqual(written.a);
      expect(await o.document('notes/b.md')).toEqual(written.b);
      expect(await o.audit('notes/')).toEqual(auditBefore);
      expect(await o.notified('notes/')).toEqual([]);
    } finally {
      await target.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
