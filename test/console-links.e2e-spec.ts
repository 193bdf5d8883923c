import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { startTestApp, type TestApp } from './support/app';
import {
  buildConsole,
  findChromium,
  launchChromium,
  seriousViolations,
  signInToConsole,
} from './support/browser';

const KEY = 'console-links-key-0123456789abcd';
/** An admin key whose access policy reads kb/ alone. */
const KB_KEY = 'console-links-kb-0123456789abcde';
const CHROMIUM = findChromium();
if (CHROMIUM === undefined) {
  process.stderr.write(
    'console links tests not run: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)\n',
  );
}
const describeInBrowser = CHROMIUM === undefined ? describe.skip : describe;

/**
 * Links in the console (docs/console.md, "Links"), in a real Chromium: a document's backlinks
 * with their passages, its broken links, its neighbourhood as a graph whose documents open
 * with the keyboard, wikilinks that open their documents, a folder's broken-links report, an
 * accessibility scan, and nothing of a folder the signed-in key may not read.
 */
describeInBrowser('links in the console', () => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const put = (document_id: string, body: string, title?: string) =>
    request(t.baseUrl)
      .post('/documents')
      .set('Authorization', `Bearer ${KEY}`)
      .send({ document_id, body, ...(title === undefined ? {} : { title }) })
      .expect(201);

  beforeAll(async () => {
    buildConsole();
    t = await startTestApp({
      API_KEYS: `ops:${KEY}:admin;kb:${KB_KEY}:admin`,
      ACCESS_POLICY: JSON.stringify({
        rules: [
          { who: ['key:ops'], read: ['*'], write: ['*'] },
          { who: ['key:kb'], read: ['kb/'] },
        ],
      }),
    });
    browser = await launchChromium(CHROMIUM!);
    await put(
      'kb/runbooks/db-failover.md',
      '# Database failover\n\nPromote [the replica](../services/postgres.md), restart [[api]] ' +
        'and flush [[Cache service]]. Notes: [[gone]].\n\n`[[not a link]]`\n',
    );
    await put('kb/services/postgres.md', '# PostgreSQL\n\nThe primary.');
    await put('kb/services/api.md', '# API\n\nServes [[postgres]] data.');
    await put('kb/services/redis.md', 'Redis.', 'Cache service');
    await put('kb/decisions/pg-16.md', '# Upgrade to 16\n\nWe moved [[postgres]] to 16.');
    await put('secret/incident.md', '# Incident\n\n[[db-failover]] failed on [[postgres]].');
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage();
  });
  afterEach(async () => {
    if (process.env.CONSOLE_SCREENSHOTS) {
      await page
        .screenshot({
          path: `/tmp/console-links-${expect.getState().currentTestName?.slice(0, 40).replace(/\W+/g, '-')}.png`,
          fullPage: true,
        })
        .catch(() => undefined);
    }
    await page.close();
  });

  const open = async (key: string, hash: string) => {
    await signInToConsole(page, t.baseUrl, key);
    await page.getByRole('heading', { name: 'All documents' }).waitFor();
    await page.goto(`${t.baseUrl}/console/#/${hash}`);
  };

  it('shows what links to a document, with the passages, and its broken links', async () => {
    await open(KEY, 'doc/kb/services/postgres.md');
    const backlinks = page.locator('.backlinks li');
    await page.getByRole('heading', { name: 'Linked from (4)' }).waitFor();
    expect(await backlinks.locator('a').allTextContents()).toEqual([
      'Upgrade to 16',
      'Database failover',
      'API',
      'Incident',
    ]);
    expect(await backlinks.nth(1).locator('.passage').textContent()).toContain(
      'Promote [the replica](../services/postgres.md)',
    );
    await backlinks.getByRole('link', { name: 'Database failover' }).click();
    await page.locator('#doc-title').getByText('Database failover').waitFor();
    await page.getByRole('heading', { name: 'Broken links (1)' }).waitFor();
    expect(await page.locator('ul.broken li').allTextContents()).toEqual([
      '“gone” → gone (wikilink)',
    ]);
    // Wikilinks open their documents inside the console; one in code stays code.
    await page.locator('.markdown').getByRole('link', { name: 'Cache service' }).click();
    await page.locator('#doc-title').getByText('Cache service').waitFor();
    expect(page.url()).toContain('#/doc/kb/services/redis.md');
    await page.goBack();
    await page.locator('#doc-title').getByText('Database failover').waitFor();
    expect(await page.locator('.markdown code').allTextContents()).toEqual(['[[not a link]]']);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('draws the neighbourhood two links deep, and opens a document from it with the keyboard', async () => {
    await open(KEY, 'doc/kb/runbooks/db-failover.md');
    const graph = page.getByRole('group', {
      name: /Documents within two links of Database failover/,
    });
    await graph.waitFor();
    const nodes = graph.getByRole('link');
    expect(
      (await nodes.evaluateAll((all) => all.map((a) => a.getAttribute('aria-label')))).sort(),
    ).toEqual([
      'API (kb/services/api.md), 1 link away',
      'Cache service (kb/services/redis.md), 1 link away',
      'Incident (secret/incident.md), 1 link away',
      'PostgreSQL (kb/services/postgres.md), 1 link away',
      'Upgrade to 16 (kb/decisions/pg-16.md), 2 links away',
    ]);
    expect(await graph.locator('line.edge').count()).toBeGreaterThanOrEqual(5);
    expect(await seriousViolations(page)).toEqual([]);
    // Tab from the last link before the graph reaches its documents; Enter opens one.
    const upgrade = graph.getByRole('link', { name: /^Upgrade to 16/ });
    await upgrade.focus();
    expect(await page.evaluate('document.activeElement?.getAttribute("aria-label")')).toMatch(
      /^Upgrade to 16/,
    );
    await page.keyboard.press('Enter');
    await page.locator('#doc-title').getByText('Upgrade to 16').waitFor();
  });

  it('reports the broken links of a folder', async () => {
    await open(KEY, 'browse/kb');
    await page.getByRole('link', { name: 'Broken links here' }).click();
    await page.getByRole('heading', { name: 'Broken links under kb/' }).waitFor();
    await page.getByRole('status').getByText('1 broken link found.').waitFor();
    const row = page.locator('table.broken-report tbody tr');
    expect(await row.locator('td').allTextContents()).toEqual([
      'Database failoverkb/runbooks/db-failover.md',
      'gone',
      'gone',
      expect.stringContaining('Notes: [[gone]].'),
    ]);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('shows a key only what it may read', async () => {
    await open(KB_KEY, 'doc/kb/runbooks/db-failover.md');
    await page.getByRole('heading', { name: 'Linked from (0)' }).waitFor();
    const graph = page.getByRole('group', { name: /Documents within two links/ });
    await graph.waitFor();
    const labels = await graph
      .getByRole('link')
      .evaluateAll((all) => all.map((a) => a.getAttribute('aria-label') ?? ''));
    expect(labels.length).toBe(4);
    expect(labels.filter((label) => label.includes('secret/'))).toEqual([]);
    await page.goto(`${t.baseUrl}/console/#/doc/kb/services/postgres.md`);
    await page.getByRole('heading', { name: 'Linked from (3)' }).waitFor();
    expect(await page.locator('.backlinks a').allTextContents()).not.toContain('Incident');
    // A link into secret/ is, for this key, a link to no document: broken, its target unnamed.
    await put('kb/notes/to-secret.md', 'See [[secret/incident]] and [[postgres]].');
    await page.goto(`${t.baseUrl}/console/#/doc/kb/notes/to-secret.md`);
    await page.getByRole('heading', { name: 'Broken links (1)' }).waitFor();
    const around = page.getByRole('group', { name: /Documents within two links/ });
    await around.waitFor();
    const near = await around
      .getByRole('link')
      .evaluateAll((all) => all.map((a) => a.getAttribute('aria-label') ?? ''));
    expect(near.length).toBeGreaterThan(1);
    expect(near.filter((label) => /secret\/|Incident/.test(label))).toEqual([]);
    await page.goto(`${t.baseUrl}/console/#/browse/kb`);
    await page.getByRole('link', { name: 'Broken links here' }).click();
    await page.getByRole('status').getByText('2 broken links found.').waitFor();
    const report = await page.locator('table.broken-report tbody').textContent();
    expect(report).toContain('secret/incident');
    expect(report).not.toContain('Incident');
    expect(await seriousViolations(page)).toEqual([]);
  });
});
