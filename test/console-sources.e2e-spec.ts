import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { TestRepository } from '../src/sources/connectors/git/git-repository.testing';
import { idPath } from './documents-helpers';
import { startTestApp, type TestApp } from './support/app';
import { answer, html, startLoopbackSite, type LoopbackSite } from './support/loopback-site';
import {
  buildConsole,
  findChromium,
  launchChromium,
  seriousViolations,
  signInToConsole,
} from './support/browser';
import { waitFor } from './support/wait';

const KEY = 'console-sources-key-0123456789abcdef';
const AS = { 'X-API-Key': KEY };
const CHROMIUM = findChromium();
const describeInBrowser = CHROMIUM === undefined ? describe.skip : describe;

/**
 * The console's Sources page in a real Chromium, on a git repository of this machine and a
 * loopback site declared in SOURCES_FILE: the source listed with its last run, a synced
 * document's provenance (a web page's linked), Sync now followed until the run ends, an item
 * the run could not write, deletions held back and confirmed through a dialog, a refused
 * sources file, and an axe-core scan of each page. (console.e2e-spec.ts says when no Chromium
 * is found.)
 */
describeInBrowser('the Sources page of the console', () => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let repo: TestRepository;
  let dir: string;
  let file: string;
  /** While this file exists, every git command of the server waits: a run stays running. */
  let gate: string;
  let site: LoopbackSite;
  let browser: Browser;
  let page: Page;
  const handbook = () => page.getByRole('region', { name: 'handbook', exact: true });
  /** The value of a field of the handbook's card. */
  const field = (name: string) => handbook().locator(`dt:text-is("${name}") + dd`);
  /** Waits for a field to read as `pattern` says: the page refreshes itself meanwhile. */
  const fieldShows = (name: string, pattern: RegExp) =>
    waitFor(
      async () => pattern.test((await field(name).textContent()) ?? ''),
      `${name} to match ${pattern}`,
    );
  const get = (path: string) => request(t.baseUrl).get(path).set(AS);
  const declare = (sources: unknown[]) => writeFile(file, JSON.stringify({ sources }));
  const declared = () => [
    { id: 'handbook', kind: 'git', url: repo.url, ref: 'main', mount: 'handbook', every: '1h' },
    { id: 'site', kind: 'web', url: `${site.url}/docs/`, mount: 'site', every: '1h' },
  ];
  const ended = (id: string) =>
    waitFor(
      async () => {
        const run = (await get(`/sources/${id}`).expect(200)).body.last_run;
        return run !== null && !['queued', 'running'].includes(run.status);
      },
      `the first run of ${id}`,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  const openSources = async () => {
    await signInToConsole(page, t.baseUrl, KEY);
    await page.getByRole('link', { name: 'Sources' }).click();
    await handbook().waitFor();
  };
  const expectAccessible = async () => {
    await page.waitForLoadState('networkidle');
    expect(await seriousViolations(page)).toEqual([]);
  };

  beforeAll(async () => {
    buildConsole();
    repo = await TestRepository.create();
    await repo.write({
      'guide.md': '---\ntitle: The guide\n---\n# Guide\n\nRestart the lanterns.\n',
      'ops/a.md': '# A\n',
      'ops/b.md': '# B\n',
      'ops/c.md': '# C\n',
    });
    await repo.commit('first');
    dir = await mkdtemp(join(tmpdir(), 'agent-data-console-sources-'));
    file = join(dir, 'sources.json');
    gate = join(dir, 'gate');
    // The server's git, found first on the PATH its git processes get: the real one, once
    // the gate is open.
    const bin = join(dir, 'bin');
    const git = execFileSync('which', ['git'], { encoding: 'utf8' }).trim();
    await mkdir(bin);
    await writeFile(
      join(bin, 'git'),
      `#!/bin/sh\nwhile [ -e '${gate}' ]; do sleep 0.05; done\nexec '${git}' "$@"\n`,
    );
    await chmod(join(bin, 'git'), 0o755);
    site = await startLoopbackSite({
      '/docs/a': answer(
        'text/html',
        html('Alpha', '<main><h1>Alpha</h1><p>The alpha page.</p></main>'),
      ),
      '/docs/': answer('text/html', html('Docs', '<main><a href="/docs/a">Alpha</a></main>')),
    });
    await declare(declared());
    t = await startTestApp({
      API_KEYS: `ops:${KEY}:admin`,
      SOURCES_FILE: file,
      DATA_DIR: dir,
      PATH: `${bin}:/usr/bin:/bin`,
      INGEST_ALLOW_HTTP: 'true',
      INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
    });
    browser = await launchChromium(CHROMIUM!);
    await ended('handbook');
    await ended('site');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await repo?.destroy();
    await site?.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    page = await browser.newPage();
  });
  afterEach(async () => {
    await page.close();
  });

  it('lists the source with its last run, and a synced document says where it came from', async () => {
    await openSources();
    const card = handbook();
    expect(await field('Kind').textContent()).toBe('git');
    expect(await field('From').textContent()).toBe(`${repo.url} at main`);
    expect(await field('State').textContent()).toBe('idle');
    expect(await field('Documents').textContent()).toBe('4');
    expect(await field('Last run').textContent()).toMatch(/^succeeded, .+: 4 checked: 4 created$/);
    expect(await field('Next run').textContent()).not.toBe('not scheduled');
    await expectAccessible();

    await card.getByRole('link', { name: 'handbook/' }).click();
    await page.getByRole('link', { name: 'The guide' }).click();
    const note = page.getByRole('note', { name: 'Provenance' });
    await note.getByText('Read-only: kept in sync by source').waitFor();
    expect(await note.locator('code').textContent()).toMatch(/@[0-9a-f]{40}:guide\.md$/);
    // Refused to writers by the server: the page offers no edit and no delete.
    expect(await page.getByRole('link', { name: 'Edit' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    await expectAccessible();
    await note.getByRole('link', { name: 'handbook' }).click();
    await page.getByRole('heading', { name: 'Runs of handbook' }).waitFor();
  });

  it('leaves a copy of a synced document editable, noting where it came from', async () => {
    const guide = (await get('/documents/handbook/guide.md').expect(200)).body;
    // As an export imported elsewhere: the provenance in its metadata, no source keeping it.
    await request(t.baseUrl)
      .post('/documents')
      .set(AS)
      .send({ document_id: 'copies/guide.md', body: guide.body, metadata: guide.metadata })
      .expect(201);
    await signInToConsole(page, t.baseUrl, KEY);
    await page.goto(`${t.baseUrl}/console/#/doc/copies/guide.md`);
    const note = page.getByRole('note', { name: 'Provenance' });
    await note.getByText('Came from source').waitFor();
    expect(await note.getByText('Read-only').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Edit' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(1);
    await expectAccessible();
  });

  it("links a web page's document to the page itself", async () => {
    await openSources();
    await page.getByRole('link', { name: 'site/' }).click();
    await page.getByRole('link', { name: 'Alpha' }).click();
    const note = page.getByRole('note', { name: 'Provenance' });
    const original = note.getByRole('link', { name: `${site.url}/docs/a` });
    expect(await original.getAttribute('href')).toBe(`${site.url}/docs/a`);
  });

  it('syncs now and follows the run to its end, with the item it could not write', async () => {
    await request(t.baseUrl)
      .post('/documents')
      .set(AS)
      .send({ document_id: 'handbook/taken.md', body: 'written by an agent' })
      .expect(201);
    await repo.write({ 'taken.md': '# Taken\n', 'fresh.md': '# Fresh\n' });
    await repo.commit('second');
    await openSources();
    await page.evaluate('window.__sameDocument = true');
    await writeFile(gate, '');
    await handbook().getByRole('button', { name: 'Sync now' }).click();
    await page
      .getByRole('status')
      .getByText(/^Run \d+ of handbook asked for/)
      .waitFor();
    await fieldShows('State', /^running$/);
    await rm(gate);
    const card = handbook();
    await fieldShows('Last run', /^completed with errors, /);
    expect(await field('Last run').textContent()).toMatch(
      /: 6 checked: 1 created, 1 failed, 4 unchanged$/,
    );
    // Shown without a reload: the page asked again until the run ended.
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    const failed = card.getByRole('table', { name: 'Items the last run could not write' });
    expect(await failed.locator('tbody tr').allInnerTexts()).toEqual([
      expect.stringMatching(
        /^taken\.md\thandbook\/taken\.md\ta document this source did not write/,
      ),
    ]);
    expect(await field('Documents').textContent()).toBe('5');

    await card.getByRole('link', { name: 'Runs of handbook' }).click();
    await page.getByRole('heading', { name: 'Runs of handbook' }).waitFor();
    // The runs' rows, not those of the tables of failed items inside them; newest first.
    const runs = page.locator('main > section > table > tbody > tr');
    await runs.first().waitFor();
    expect(await runs.count()).toBe(2);
    expect(await runs.first().innerText()).toMatch(/manual\tcompleted with errors\t/);
    expect(await runs.nth(1).innerText()).toContain('succeeded');
    await expectAccessible();
  });

  it('holds deletions back until they are confirmed in a dialog', async () => {
    await repo.remove('ops/a.md', 'ops/b.md', 'ops/c.md');
    await repo.commit('third');
    await openSources();
    await handbook().getByRole('button', { name: 'Sync now' }).click();
    const card = handbook();
    await card.getByText('3 deletions held back.').waitFor();
    await expectAccessible();

    // Dismissed: nothing is asked of the server.
    const asked: string[] = [];
    const posted: string[] = [];
    page.on('request', (r) => r.method() === 'POST' && posted.push(r.url()));
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await card.getByRole('button', { name: 'Confirm deletions' }).click();
    await waitFor(() => asked.length > 0, 'the dialog');
    expect(posted).toEqual([]);
    expect(asked).toEqual([
      'Delete the 3 deletions held back from handbook? They can be restored from their history.',
    ]);
    await get(idPath('handbook/ops/a.md')).expect(200);
    expect((await get('/sources/handbook').expect(200)).body.held_deletions).toBe(3);

    page.once('dialog', (dialog) => void dialog.accept());
    await card.getByRole('button', { name: 'Confirm deletions' }).click();
    await page.getByRole('status').getByText('Deletions confirmed').waitFor();
    await fieldShows('Documents', /^2$/);
    expect(posted).toEqual([`${t.baseUrl}/sources/handbook/sync?confirm_deletions=true`]);
    expect(await card.getByRole('button', { name: 'Confirm deletions' }).count()).toBe(0);
    for (const id of ['handbook/ops/a.md', 'handbook/ops/b.md', 'handbook/ops/c.md']) {
      await get(idPath(id)).expect(404);
    }
    expect((await get(idPath('handbook/taken.md')).expect(200)).body.body).toBe(
      'written by an agent',
    );
  });

  it('says so when the sources file is refused', async () => {
    await writeFile(file, '{"sources": [{"id": "handbook", "kind": "git"}]}');
    await waitFor(
      async () => (await get('/sources').expect(200)).body.file_error !== null,
      'the file to be refused',
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    await openSources();
    await page
      .getByRole('alert')
      .getByText(/The sources file was refused, and the sources stay as they were: .*sources\[0\]/)
      .waitFor();
    await declare(declared());
  });
});
