import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import request from 'supertest';
import { LinksPendingJob } from '../src/documents/links-pending.job';
import { idPath } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';
import { callTool } from './support/mcp-http';
import { waitFor } from './support/wait';

/**
 * Links are written with the body that holds them (docs/documents.md, "Links between
 * documents"): by the statement of every write, whichever way it comes in (REST, bulk, MCP, a
 * source), and by the background reading of the queue for writes that did not write them.
 */
describe('links written with the body', () => {
  let t: TestApp;
  let db: Client;
  let dir: string;

  /** The link row of a document: its keys and texts, and whether it counts (alive). */
  const row = async (id: string) =>
    (
      await db.query<{ keys: string[]; labels: string[]; alive: boolean }>(
        `SELECT keys, labels, alive FROM kb_links WHERE source_id = $1`,
        [id],
      )
    ).rows[0];
  const pending = async () =>
    (await db.query(`SELECT document_id FROM kb_links_pending ORDER BY 1`)).rows.map(
      (r) => r.document_id,
    );
  const create = (id: string, body: string) =>
    request(t.baseUrl).post('/documents').send({ document_id: id, body }).expect(201);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-data-links-'));
    t = await startTestApp({ DATA_DIR: dir });
    db = await t.db.client();
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes, changes and drops a document’s links with its body', async () => {
    await create('kb/ops/runbook.md', 'Fix [the disk](../svc/disk.md), then [[db|the database]].');
    expect(await row('kb/ops/runbook.md')).toEqual({
      keys: ['=kb/svc/disk.md', '%db'],
      labels: ['the disk', 'the database'],
      alive: true,
    });
    await request(t.baseUrl)
      .put(idPath('kb/ops/runbook.md'))
      .send({ body: 'Now only kb://kb/svc/cache.md.' })
      .expect(200);
    expect((await row('kb/ops/runbook.md')).keys).toEqual(['=kb/svc/cache.md']);
    await request(t.baseUrl)
      .patch(idPath('kb/ops/runbook.md'))
      .send({ old_str: 'kb://kb/svc/cache.md', new_str: '[[cache]]' })
      .expect(200);
    expect((await row('kb/ops/runbook.md')).keys).toEqual(['%cache']);
    // A title changes no link; a body without links leaves no row.
    await request(t.baseUrl)
      .put(idPath('kb/ops/runbook.md'))
      .send({ title: 'Runbook' })
      .expect(200);
    expect((await row('kb/ops/runbook.md')).keys).toEqual(['%cache']);
    await request(t.baseUrl)
      .put(idPath('kb/ops/runbook.md'))
      .send({ body: 'No links. `[[not|a link]]`' })
      .expect(200);
    expect(await row('kb/ops/runbook.md')).toBeUndefined();
    // Bringing revision 2 back brings its links back.
    await request(t.baseUrl)
      .post(`${idPath('kb/ops/runbook.md')}/restore`)
      .send({ revision: 2 })
      .expect(200);
    expect((await row('kb/ops/runbook.md')).keys).toEqual(['=kb/svc/cache.md']);
    expect(await pending()).toEqual([]);
  });

  it('keeps a deleted document’s links aside, and counts them again once restored', async () => {
    await create('kb/del/a.md', 'See [[b]].');
    await request(t.baseUrl).delete(idPath('kb/del/a.md')).expect(200);
    expect(await row('kb/del/a.md')).toMatchObject({ alive: false, keys: ['%b'] });
    await request(t.baseUrl)
      .post(`${idPath('kb/del/a.md')}/restore`)
      .expect(200);
    expect(await row('kb/del/a.md')).toMatchObject({ alive: true });
    // Created again over the deleted one: the new body's links.
    await request(t.baseUrl).delete(idPath('kb/del/a.md')).expect(200);
    await create('kb/del/a.md', 'Now [[c]].');
    expect(await row('kb/del/a.md')).toMatchObject({ alive: true, keys: ['%c'] });
  });

  it('writes nothing when the write is refused', async () => {
    await create('kb/refused.md', 'See [[x]].');
    await request(t.baseUrl)
      .put(idPath('kb/refused.md'))
      .send({ body: 'See [[y]].', expected_revision: 7 })
      .expect(409);
    expect((await row('kb/refused.md')).keys).toEqual(['%x']);
  });

  it('reads a moved document’s links from its new folder', async () => {
    await create('kb/a/moved.md', 'Up: [parent](../index.md); kb://kb/fixed.md');
    expect((await row('kb/a/moved.md')).keys).toEqual(['=kb/index.md', '=kb/fixed.md']);
    await request(t.baseUrl)
      .post(`${idPath('kb/a/moved.md')}/move`)
      .send({ to: 'kb/b/c/moved.md' })
      .expect(200);
    expect(await row('kb/a/moved.md')).toBeUndefined();
    expect((await row('kb/b/c/moved.md')).keys).toEqual(['=kb/b/index.md', '=kb/fixed.md']);
  });

  it('writes the links of a bulk write’s creates and updates', async () => {
    await create('bulk/u.md', 'before [[old]]');
    const { body } = await request(t.baseUrl)
      .post('/documents/bulk')
      .send({
        items: [
          { op: 'create', document_id: 'bulk/a.md', body: 'to [b](b.md) and [[c]]' },
          { op: 'create', document_id: 'bulk/b.md', body: 'no links' },
          { op: 'update', document_id: 'bulk/u.md', body: 'after [[new]]' },
        ],
      })
      .expect(200);
    expect(body.succeeded).toBe(3);
    expect((await row('bulk/a.md')).keys).toEqual(['~b', '%c']);
    expect(await row('bulk/b.md')).toBeUndefined();
    expect((await row('bulk/u.md')).keys).toEqual(['%new']);
  });

  it('writes the links of an MCP write', async () => {
    const envelope = await callTool(t.baseUrl, '/mcp', 'upload_document', {
      document_id: 'mcp/a.md',
      content: 'Links to [[mcp/b]].',
    });
    expect(envelope.result.isError).toBeFalsy();
    expect((await row('mcp/a.md')).keys).toEqual(['%mcp/b']);
  });

  it('writes the links of a source’s documents', async () => {
    await mkdir(join(dir, 'src'), { recursive: true });
    await writeFile(join(dir, 'src', 'one.md'), '# One\n\nSee [two](two.md).\n');
    await writeFile(join(dir, 'src', 'two.md'), '# Two\n');
    await request(t.baseUrl)
      .post('/sources')
      .send({ id: 'files', kind: 'folder', path: join(dir, 'src'), mount: 'files' })
      .expect(201);
    await waitFor(async () => (await row('files/one.md')) !== undefined, 'the source’s sync', {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    expect((await row('files/one.md')).keys).toEqual(['~two']);
  });

  it('queues a body written by anything else, and reads its links in the background', async () => {
    await create('psql/a.md', 'See [[old]].');
    // A person with psql (or an older server) writes bodies without their links.
    await db.query(
      `UPDATE kb_documents SET body = 'See [[new]] and [x](y.md).' WHERE document_id = 'psql/a.md'`,
    );
    await db.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
       VALUES ('psql/b.md', 'psql', 'B', '[[a]]', 'h')`,
    );
    expect(await row('psql/a.md')).toBeUndefined();
    expect(await pending()).toEqual(['psql/a.md', 'psql/b.md']);
    const read = await t.app.get(LinksPendingJob).run();
    expect(read).toBe(2);
    expect((await row('psql/a.md')).keys).toEqual(['%new', '~y']);
    expect((await row('psql/b.md')).keys).toEqual(['%a']);
    expect(await pending()).toEqual([]);
    // The service then writes a body without links: the row the background wrote goes.
    await request(t.baseUrl).put(idPath('psql/a.md')).send({ body: 'plain' }).expect(200);
    expect(await row('psql/a.md')).toBeUndefined();
    // A purged document takes its row along.
    await db.query(`DELETE FROM kb_documents WHERE document_id = 'psql/b.md'`);
    expect(await row('psql/b.md')).toBeUndefined();
  });
});
