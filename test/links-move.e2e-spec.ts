import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import request from 'supertest';
import { auditOf, idPath } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';
import type { Json } from './support/mcp-http';
import { waitFor } from './support/wait';

/** Each linking document as written, and as the move of kb/ops/backup.md must leave it. */
const LINKING: Record<string, [string, string]> = {
  'kb/runbooks/disk.md': [
    'When the disk is full, restore with [the backup](../ops/backup.md#restore).',
    'When the disk is full, restore with [the backup](../archive/ops/backup-v1.md#restore).',
  ],
  'kb/index.md': [
    'Runbooks: [[backup]], [[disk|disks]].',
    'Runbooks: [[backup-v1]], [[disk|disks]].',
  ],
  'kb/by-title.md': ['See [[Backup runbook]].', 'See [[Backup runbook]].'],
  'kb/uri.md': ['Also kb://kb/ops/backup.md.', 'Also kb://kb/archive/ops/backup-v1.md.'],
  'kb/reference.md': [
    'Read [the runbook][b] twice: [again][b].\n\n[b]: /kb/ops/backup.md "Backup"\n',
    'Read [the runbook][b] twice: [again][b].\n\n[b]: /kb/archive/ops/backup-v1.md "Backup"\n',
  ],
  'kb/ops/same-folder.md': [
    'Next: [backup](./backup.md).',
    'Next: [backup](../archive/ops/backup-v1.md).',
  ],
};

/**
 * A move keeps every link to the moved document working (docs/documents.md, "Moves keep
 * links working"): the documents linking to it are written again, in the move's transaction,
 * as new revisions by system:links, and so are the moved document's own relative links.
 */
describe('moves keep links working', () => {
  let t: TestApp;
  let db: Client;
  let dir: string;
  const body = async (id: string) =>
    (await request(t.baseUrl).get(idPath(id)).expect(200)).body as Json;
  const put = (document_id: string, text: string, title?: string) =>
    request(t.baseUrl)
      .post('/documents')
      .send({ document_id, body: text, ...(title === undefined ? {} : { title }) })
      .expect(201);

  /** Asks the folder source for a run and waits for that run to end. */
  const sync = async () => {
    const { body: asked } = await request(t.baseUrl).post('/sources/files/sync').expect(202);
    return waitFor(
      async () => {
        const { body: listed } = await request(t.baseUrl)
          .get('/sources/files/runs')
          .query({ limit: 20 })
          .expect(200);
        const run = (listed.runs as Json[]).find((r) => r.id === asked.id);
        return run !== undefined && !['queued', 'running'].includes(run.status) && run;
      },
      `run ${asked.id} of the folder source`,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-data-links-move-'));
    t = await startTestApp({ DATA_DIR: dir });
    db = await t.db.client();
    await put(
      'kb/ops/backup.md',
      '# Backup\n\nIf [the disk](../runbooks/disk.md) fails, see [[index]] and [this](backup.md).',
      'Backup runbook',
    );
    for (const [id, [text]] of Object.entries(LINKING)) await put(id, text);
    // A document a source keeps in sync is the source's to change, never the move's.
    await mkdir(join(dir, 'files'), { recursive: true });
    await writeFile(
      join(dir, 'files', 'synced.md'),
      'From a source: [backup](../kb/ops/backup.md).\n',
    );
    await request(t.baseUrl)
      .post('/sources')
      .send({ id: 'files', kind: 'folder', path: join(dir, 'files'), mount: 'files' })
      .expect(201);
    await waitFor(
      async () => (await request(t.baseUrl).get(idPath('files/synced.md'))).ok,
      'the sync',
      {
        timeoutMs: 30_000,
      },
    );
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes again every link to the moved document, and its own links, in one transaction', async () => {
    const before = await body('kb/ops/backup.md');
    const moved = await request(t.baseUrl)
      .post(`${idPath('kb/ops/backup.md')}/move`)
      .send({ to: 'kb/archive/ops/backup-v1.md' })
      .expect(200);
    // Its own relative link now climbs one folder more; the others still resolve.
    expect(moved.body).toMatchObject({
      document_id: 'kb/archive/ops/backup-v1.md',
      revision: before.revision + 1,
      body: '# Backup\n\nIf [the disk](../../runbooks/disk.md) fails, see [[index]] and [this](backup-v1.md).',
    });
    for (const [id, [was, now]] of Object.entries(LINKING)) {
      const document = await body(id);
      expect({ id, body: document.body }).toEqual({ id, body: now });
      expect({ id, revision: document.revision }).toEqual({ id, revision: was === now ? 1 : 2 });
    }
    // Each rewrite is a revision of its own, by system:links, in the history and the audit trail.
    const history = (
      await request(t.baseUrl)
        .get(`${idPath('kb/index.md')}/history`)
        .expect(200)
    ).body;
    expect(history.items[0]).toMatchObject({ revision: 1, actor: 'system:links' });
    expect((await auditOf(db, 'kb/index.md')).map((a) => [a.operation, a.actor])).toEqual([
      ['create', 'local'],
      ['update', 'system:links'],
    ]);
    expect((await auditOf(db, 'kb/archive/ops/backup-v1.md')).map((a) => a.operation)).toEqual([
      'create',
      'move',
      'update',
    ]);
    // Every link of kb/ resolves; the source's document is left as its source wrote it.
    const broken = (await request(t.baseUrl).get('/documents/links/broken').expect(200)).body;
    expect(broken.items.map((i: Json) => [i.document_id, i.target])).toEqual([
      ['files/synced.md', '../kb/ops/backup.md'],
    ]);
    expect((await body('files/synced.md')).revision).toBe(1);
    const backlinks = (
      await request(t.baseUrl)
        .get(`${idPath('kb/archive/ops/backup-v1.md')}/backlinks`)
        .expect(200)
    ).body;
    expect(backlinks.backlinks.map((b: Json) => b.document_id)).toEqual(
      Object.keys(LINKING).sort(),
    );
  });

  it('writes nothing when the move is refused', async () => {
    const revisions = async () =>
      (await db.query(`SELECT sum(revision)::int AS s FROM kb_documents`)).rows[0].s as number;
    const sum = await revisions();
    await request(t.baseUrl)
      .post(`${idPath('kb/archive/ops/backup-v1.md')}/move`)
      .send({ to: 'kb/index.md' })
      .expect(409);
    await request(t.baseUrl)
      .post(`${idPath('kb/archive/ops/backup-v1.md')}/move`)
      .send({ to: 'kb/elsewhere.md', expected_revision: 1 })
      .expect(409);
    expect(await revisions()).toBe(sum);
  });

  it('writes again a wikilink that named a note by its path, even if its title still matches', async () => {
    await put('kb/c/PostgreSQL.md', '# PostgreSQL');
    await put('kb/c/api.md', 'Serves [[PostgreSQL]] data.');
    await request(t.baseUrl)
      .post(`${idPath('kb/c/PostgreSQL.md')}/move`)
      .send({ to: 'kb/c/db/Primary database.md' })
      .expect(200);
    expect((await body('kb/c/api.md')).body).toBe('Serves [[Primary database]] data.');
  });

  it('writes again the links to a file its source saw renamed', async () => {
    await writeFile(join(dir, 'files', 'target.md'), '# Target\n');
    await sync();
    await put('kb/to-source.md', 'See [the target](../files/target.md) and [[files/target]].');
    await rename(join(dir, 'files', 'target.md'), join(dir, 'files', 'renamed.md'));
    const run = await sync();
    // The watch may have moved it first; one of the two runs did, as a move.
    expect(run.status).toBe('succeeded');
    await request(t.baseUrl).get(idPath('files/target.md')).expect(404);
    expect((await body('files/renamed.md')).body).toBe('# Target\n');
    expect((await body('kb/to-source.md')).body).toBe(
      'See [the target](../files/renamed.md) and [[files/renamed]].',
    );
    const backlinks = (
      await request(t.baseUrl)
        .get(`${idPath('files/renamed.md')}/backlinks`)
        .expect(200)
    ).body;
    expect(backlinks.backlinks.map((b: Json) => b.document_id)).toEqual(['kb/to-source.md']);
  });

  it('needs no rewrite where the links still resolve', async () => {
    await put('kb/a/name.md', '# Name');
    await put('kb/a/by-name.md', '[[name]] and [[kb/a/name]]');
    await request(t.baseUrl)
      .post(`${idPath('kb/a/name.md')}/move`)
      .send({ to: 'kb/b/name.md' })
      .expect(200);
    // The name still means it (nothing else is called so); the path does not any more, and
    // stays a path.
    expect((await body('kb/a/by-name.md')).body).toBe('[[name]] and [[kb/b/name]]');
  });
});
