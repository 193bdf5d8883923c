import { mkdtemp, rm, writeFile, mkdir, rename, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { idPath } from './documents-helpers';
import { aSavedPage } from './factories';
import { startTestApp, TestApp } from './support/app';
import { html, startLoopbackSite, type LoopbackSite, type Route } from './support/loopback-site';
import { sourceRunEnded } from './support/source-runs';
import { waitFor } from './support/wait';

/**
 * A watched folder and a web site as sources declared over `/sources` (no SOURCES_FILE):
 * what each holds appears under its mount, a change of a file shows up without asking, a
 * changed page after the next sync with only conditional requests for the others, a page
 * gone is deleted, and a site that cannot be read deletes nothing; a folder gone from the
 * disk deletes nothing either.
 */
const KEY = 'sources-kinds-key-0123456789abcdef';
const AS = { 'X-API-Key': KEY };

type Run = { id: string; status: string; counts: Record<string, number>; message: string | null };

describe('folder and web sources', () => {
  let t: TestApp;
  let dir: string;
  let site: LoopbackSite;
  const pages: Record<string, { body: string; etag: string }> = {
    '/docs/': {
      body: html(
        'Docs',
        '<main><h1>Docs</h1><a href="/docs/a">A</a> <a href="/docs/b">B</a></main>',
      ),
      etag: '"r1"',
    },
    '/docs/a': {
      body: html('Alpha', '<main><h1>Alpha</h1><p>The alpha page.</p></main>'),
      etag: '"a1"',
    },
    '/docs/b': {
      body: html('Beta', '<main><h1>Beta</h1><p>The beta page.</p></main>'),
      etag: '"b1"',
    },
  };
  /** While set, the site answers every request with this status (an outage). */
  let down: number | undefined;
  const page =
    (path: string): Route =>
    (req, res) => {
      if (down !== undefined) return res.writeHead(down, { 'Retry-After': '1' }).end('down');
      const entry = pages[path];
      if (entry === undefined) return res.writeHead(404).end('gone');
      if (req.headers['if-none-match'] === entry.etag) return res.writeHead(304).end();
      res.writeHead(200, { 'Content-Type': 'text/html', ETag: entry.etag }).end(entry.body);
    };

  const get = (path: string) => request(t.baseUrl).get(path).set(AS);
  const lastRun = async (id: string, after?: string): Promise<Run> =>
    waitFor(
      async () => {
        const { body } = await get(`/sources/${id}`).expect(200);
        const run: Run | null = body.last_run;
        return run !== null && run.id !== after && !['queued', 'running'].includes(run.status)
          ? run
          : undefined;
      },
      `a run of ${id} to end`,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  /** The source's first run, once ended (its watch's runs may follow it at once). */
  const firstRun = (id: string): Promise<Run> =>
    sourceRunEnded<Run>(t.baseUrl, AS, id, () => true, `the first run of ${id}`);
  const sync = async (id: string): Promise<Run> => {
    const { body } = await request(t.baseUrl).post(`/sources/${id}/sync`).set(AS).expect(202);
    return sourceRunEnded<Run>(t.baseUrl, AS, id, (r) => r.id === body.id, `run ${body.id}`);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-data-folder-source-'));
    await mkdir(join(dir, 'notes', 'sub'), { recursive: true });
    await writeFile(join(dir, 'notes', 'one.md'), '# One\n\nThe first note.\n');
    await writeFile(join(dir, 'notes', 'sub', 'two.md'), '# Two\n\nThe second note.\n');
    await writeFile(join(dir, 'notes', '.hidden.md'), 'hidden');
    for (const n of [3, 4, 5]) await writeFile(join(dir, 'notes', `n${n}.md`), `# Note ${n}\n`);
    await writeFile(join(dir, 'notes', 'page.html'), aSavedPage('Tide tables'));
    site = await startLoopbackSite({
      '/robots.txt': (_req, res) => res.writeHead(404).end(),
      '/docs/': page('/docs/'),
      '/docs/a': page('/docs/a'),
      '/docs/b': page('/docs/b'),
    });
    t = await startTestApp({
      API_KEYS: `ops:${KEY}:admin`,
      DATA_DIR: dir,
      INGEST_ALLOW_HTTP: 'true',
      INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('syncs a folder, and follows a change to it without being asked', async () => {
    await request(t.baseUrl)
      .post('/sources')
      .set(AS)
      .send({ id: 'notes', kind: 'folder', path: join(dir, 'notes'), mount: 'notes' })
      .expect(201);
    const first = await firstRun('notes');
    expect(first.counts).toMatchObject({ created: 6, failed: 0 });
    const one = (await get(idPath('notes/one.md')).expect(200)).body;
    expect(one.metadata).toMatchObject({
      source_id: 'notes',
      source_uri: join(dir, 'notes', 'one.md'),
    });
    await get(idPath('notes/.hidden.md')).expect(404);
    // An HTML file is read as a fetched page is: its article, without the site around it.
    const page = (await get(idPath('notes/page.html')).expect(200)).body;
    expect(page).toMatchObject({ title: 'Tide tables', metadata: { source_type: 'html' } });
    expect(page.body).toContain('The **marmalade** release. See [the notes](notes.txt).');
    expect(page.body).not.toMatch(/Site menu|Site banner|Site footer/);

    await writeFile(join(dir, 'notes', 'one.md'), '# One\n\nThe first note, edited.\n');
    await waitFor(
      async () => (await get(idPath('notes/one.md')).expect(200)).body.body.includes('edited'),
      'the watched edit to arrive',
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    await unlink(join(dir, 'notes', 'sub', 'two.md'));
    await waitFor(
      async () => (await get(idPath('notes/sub/two.md'))).status === 404,
      'the watched deletion to arrive',
      { timeoutMs: 20_000, intervalMs: 100 },
    );
  });

  it('syncs a site: its pages under the mount, then only conditional requests', async () => {
    await request(t.baseUrl)
      .post('/sources')
      .set(AS)
      .send({
        id: 'site',
        kind: 'web',
        url: `${site.url}/docs/`,
        mount: 'site',
        max_pages: 20,
        max_delete: 0.5,
      })
      .expect(201);
    const first = await lastRun('site');
    expect(first.status).toBe('succeeded');
    expect(first.counts).toMatchObject({ created: 3, failed: 0 });
    const alpha = (await get(idPath('site/a.md')).expect(200)).body;
    expect(alpha.body).toContain('The alpha page.');
    expect(alpha.metadata.source_uri).toBe(`${site.url}/docs/a`);

    const before = site.hits.length;
    const again = await sync('site');
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    const later = site.hits.slice(before).filter((hit) => pages[hit.path] !== undefined);
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((hit) => hit.headers['if-none-match'] !== undefined)).toBe(true);
  });

  it('takes a changed page and deletes a page gone', async () => {
    pages['/docs/a'] = {
      body: html('Alpha', '<main><h1>Alpha</h1><p>The alpha page, changed.</p></main>'),
      etag: '"a2"',
    };
    delete pages['/docs/b'];
    const run = await sync('site');
    expect(run.counts).toMatchObject({ updated: 1, deleted: 1 });
    expect((await get(idPath('site/a.md')).expect(200)).body.body).toContain('changed');
    await get(idPath('site/b.md')).expect(404);
  });

  it('deletes nothing when the site cannot be read, and says why', async () => {
    const before = (await get('/documents?prefix=site/').expect(200)).body;
    down = 503;
    try {
      const run = await sync('site');
      expect(run.status).toBe('failed');
      expect(run.message).toMatch(/503/);
      expect(run.counts).toMatchObject({ deleted: 0, held: 0 });
    } finally {
      down = undefined;
    }
    const after = (await get('/documents?prefix=site/').expect(200)).body;
    expect(after).toEqual(before);
    expect((await get(idPath('site/a.md')).expect(200)).body.body).toContain('changed');
  });

  it('deletes nothing when the folder is gone from the disk, and says why', async () => {
    const moved = join(dir, 'notes-away');
    await rename(join(dir, 'notes'), moved);
    try {
      const run = await sync('notes');
      expect(run.status).toBe('failed');
      expect(run.message).toContain(join(dir, 'notes'));
      expect(run.counts).toMatchObject({ deleted: 0 });
      await get(idPath('notes/one.md')).expect(200);
    } finally {
      await rename(moved, join(dir, 'notes'));
    }
  });
});
