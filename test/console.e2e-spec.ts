import { getRandomPort } from 'get-port-please';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { startTestApp, type TestApp } from './support/app';
import { type OidcProvider, startOidcProvider } from './support/oidc';
import { waitFor } from './support/wait';
import {
  buildConsole,
  findChromium,
  launchChromium,
  seriousViolations,
  signInToConsole,
} from './support/browser';

const KEY = 'console-key-0123456789abcdef0123';
/** A second admin key whose access policy reads and writes `team-b/` alone. */
const TEAM_B_KEY = 'team-b-key-0123456789abcdef0123';
const CHROMIUM = findChromium();
if (CHROMIUM === undefined) {
  process.stderr.write(
    'console browser tests not run: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)\n',
  );
}
const describeInBrowser = CHROMIUM === undefined ? describe.skip : describe;

/**
 * The operator console in a real Chromium (docs/console.md): sign-in, browse, a document,
 * search, edits with a conflict, history, the change feed, the pipeline, hostile bodies and
 * ids, the keyboard alone, and an accessibility scan.
 */
describeInBrowser('the console in Chromium', () => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const api = () => request(t.baseUrl);
  const put = (id: string, body: string, extra: Record<string, unknown> = {}) =>
    api()
      .post('/documents')
      .set('Authorization', `Bearer ${KEY}`)
      .send({ document_id: id, body, ...extra })
      .expect(201);

  beforeAll(async () => {
    buildConsole();
    t = await startTestApp({
      API_KEYS: `ops:${KEY}:admin;teamb:${TEAM_B_KEY}:admin`,
      ACCESS_POLICY: JSON.stringify({
        rules: [
          { who: ['key:ops'], read: ['*'], write: ['*'] },
          { who: ['key:teamb'], read: ['team-b/'], write: ['team-b/'] },
        ],
      }),
      VECTOR_SYNC_ENABLED: 'true',
    });
    browser = await launchChromium(CHROMIUM!);
    await put(
      'guide/intro.md',
      '# Intro\n\nSee [setup](setup.md) first.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n',
      {
        title: 'Introduction',
        tags: ['start'],
      },
    );
    await put(
      'guide/setup.md',
      '# Setup\n\n## Install\n\nRun `npm install`, then the lighthouse.\n',
      {
        title: 'Setup',
      },
    );
    // Indexing follows writes by a moment: the search test starts once both modes find it.
    for (const mode of ['lexical', 'hybrid']) {
      await waitFor(async () => {
        const found = await api()
          .get('/search')
          .query({ query: 'lighthouse', mode })
          .set('Authorization', `Bearer ${KEY}`);
        return found.body.results?.length > 0;
      }, `guide/setup.md to be searchable in ${mode} mode`);
    }
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage();
  });
  afterEach(async () => {
    // A failed test leaves what the page showed, to look at.
    if (expect.getState().assertionCalls === 0 || process.env.CONSOLE_SCREENSHOTS) {
      await page
        .screenshot({
          path: `/tmp/console-${expect.getState().currentTestName?.slice(0, 40).replace(/\W+/g, '-')}.png`,
        })
        .catch(() => undefined);
    }
    await page.close();
  });

  const signIn = (key = KEY) => signInToConsole(page, t.baseUrl, key);

  it('refuses a wrong key, then signs in and browses to a rendered document', async () => {
    await signIn('wrong-key-0123456789abcdef0123');
    await page.getByRole('alert').getByText('This key is not valid.').waitFor();
    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'guide/' }).click();
    await page.getByRole('heading', { name: 'guide' }).waitFor();
    await page.getByRole('link', { name: 'Introduction' }).click();
    await page.locator('#doc-title').getByText('Introduction').waitFor();
    expect(await page.locator('.markdown table td').allTextContents()).toEqual(['1', '2']);
    expect(await page.getByLabel('MCP resource URI').inputValue()).toBe('kb://guide/intro.md');
    // A link between documents opens the other one inside the console.
    await page.locator('.markdown').getByRole('link', { name: 'setup' }).click();
    await page.locator('#doc-title').getByText('Setup').waitFor();
    expect(page.url()).toContain('#/doc/guide/setup.md');
    // The key is in session storage only: no cookie, not in the address.
    expect(await page.context().cookies()).toEqual([]);
    expect(page.url()).not.toContain(KEY);
  });

  it('searches in each mode, highlights the words and opens the document at its passage', async () => {
    await signIn();
    await page.getByRole('link', { name: 'Search' }).click();
    for (const mode of ['lexical', 'hybrid']) {
      await page.getByLabel('Search for').fill('lighthouse');
      await page.getByLabel('Mode').selectOption(mode);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      const result = page.locator('.results li').first();
      await result.waitFor();
      expect(await result.locator('mark').first().textContent()).toMatch(/lighthouse/i);
      expect(await result.locator('.heading-path').textContent()).toBe('Setup');
    }
    await page.getByLabel('In folder').fill('nowhere');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('status').getByText('0 results').waitFor();
    await page.getByLabel('In folder').fill('guide');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.locator('.results li a').first().click();
    await page.locator('#doc-title').getByText('Setup').waitFor();
    // Opened at its passage: the heading of its path has the focus.
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Setup');
  });

  it('edits with a preview, and on a conflict shows both versions and lets the user choose', async () => {
    await put('edit/note.md', '# Note\n\nfirst line\n', { title: 'Note' });
    await signIn();
    await page.goto(`${t.baseUrl}/console/#/edit/edit/note.md`);
    await page.getByLabel('Body (markdown)').fill('# Note\n\nmine **bold**\n');
    await page.getByRole('tab', { name: 'Preview' }).click();
    expect(await page.locator('.preview strong').textContent()).toBe('bold');
    await page.getByRole('tab', { name: 'Write' }).click();
    // Someone else saves meanwhile.
    await api()
      .put('/documents/edit/note.md')
      .set('Authorization', `Bearer ${KEY}`)
      .send({ body: '# Note\n\ntheirs\n' })
      .expect(200);
    await page.getByRole('button', { name: 'Save' }).click();
    const conflict = page.locator('.conflict');
    await conflict.getByText('Someone saved this document meanwhile').waitFor();
    expect(await conflict.locator('.removed').allTextContents()).toContain('- theirs\n');
    expect(await conflict.locator('.added').allTextContents()).toContain('+ mine **bold**\n');
    await conflict.getByRole('button', { name: /Keep mine/ }).click();
    await page.locator('#doc-title').getByText('Note').waitFor();
    const saved = await api().get('/documents/edit/note.md').set('Authorization', `Bearer ${KEY}`);
    expect(saved.body).toMatchObject({ body: '# Note\n\nmine **bold**\n', revision: 3 });
  });

  it('creates, renames, deletes and undeletes a document', async () => {
    await signIn();
    await page.goto(`${t.baseUrl}/console/#/new?folder=made`);
    await page.getByLabel(/^Id/).fill('made/fresh.md');
    await page.getByLabel('Title').fill('Fresh');
    await page.getByLabel('Body (markdown)').fill('# Fresh\n\nnew text');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#doc-title').getByText('Fresh').waitFor();
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByLabel(/^Id/).fill('made/renamed.md');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#doc-title').getByText('Fresh').waitFor();
    expect(page.url()).toContain('#/doc/made/renamed.md');
    await api().get('/documents/made/fresh.md').set('Authorization', `Bearer ${KEY}`).expect(404);
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(/#\/browse\/made$/);
    await page.goto(`${t.baseUrl}/console/#/history/made/renamed.md`);
    await page.getByRole('button', { name: 'Undelete' }).click();
    await page
      .getByRole('status')
      .getByText(/Restored/)
      .waitFor();
    await api().get('/documents/made/renamed.md').set('Authorization', `Bearer ${KEY}`).expect(200);
  });

  it('diffs any two revisions and restores one', async () => {
    await put('hist/doc.md', 'alpha\nbeta\n');
    for (const body of ['alpha\ngamma\n', 'delta\n']) {
      await api()
        .put('/documents/hist/doc.md')
        .set('Authorization', `Bearer ${KEY}`)
        .send({ body })
        .expect(200);
    }
    await signIn();
    await page.goto(`${t.baseUrl}/console/#/history/hist/doc.md`);
    await page.getByLabel('Compare from revision 1').check();
    await page.getByLabel('Compare to revision 3').check();
    const diff = page.locator('figure.diff');
    await diff.locator('.added').first().waitFor();
    expect(await diff.locator('.removed').allTextContents()).toEqual(['- alpha\n- beta\n']);
    expect(await diff.locator('.added').allTextContents()).toEqual(['+ delta\n']);
    expect(await page.locator('tbody tr').nth(1).textContent()).toContain('ops');
    await page.getByRole('button', { name: 'Restore revision 2' }).click();
    await page
      .getByRole('status')
      .getByText('Restored: the document is now at revision 4.')
      .waitFor();
    const restored = await api()
      .get('/documents/hist/doc.md')
      .set('Authorization', `Bearer ${KEY}`);
    expect(restored.body.body).toBe('alpha\ngamma\n');
  });

  it('shows the pipeline and re-queues a folder', async () => {
    await put('elsewhere/note.md', '# Elsewhere\n\nNot in the folder re-queued.\n');
    // When each document was last queued: a re-queue moves it, the worker leaves it be, so
    // it tells a re-queued document from one the worker merely embedded again.
    const sql = await t.db.client();
    const queuedAt = async () =>
      Object.fromEntries(
        (
          await sql.query<{ document_id: string; queued_at: number }>(
            `SELECT document_id, EXTRACT(EPOCH FROM vector_queued_at)::float8 AS queued_at
               FROM kb_documents
              WHERE document_id IN ('guide/intro.md', 'guide/setup.md', 'elsewhere/note.md')`,
          )
        ).rows.map((row) => [row.document_id, row.queued_at]),
      );
    const before = await queuedAt();
    await signIn();
    await page.getByRole('link', { name: 'Pipeline' }).click();
    await page.getByRole('heading', { name: 'Documents by vector status' }).waitFor();
    await page.getByLabel('Embedder').getByText('provider').waitFor();
    await page.getByLabel('Re-queue a folder (empty: everything)').fill('guide/');
    await page.getByRole('button', { name: 'Re-queue', exact: true }).click();
    await page.getByRole('status').waitFor();
    expect(await page.getByRole('status').textContent()).toBe('Queued 2 documents for embedding.');
    const after = await queuedAt();
    expect(after['guide/intro.md']).toBeGreaterThan(before['guide/intro.md']);
    expect(after['guide/setup.md']).toBeGreaterThan(before['guide/setup.md']);
    expect(after['elsewhere/note.md']).toBe(before['elsewhere/note.md']);
  });

  it('renders a hostile body without running anything', async () => {
    await put(
      'xss/evil.md',
      '# Evil\n\n<script>window.__pwned = 1</script>\n\n<img src="x" onerror="window.__pwned = 2">\n\n[click](javascript:window.__pwned=3)\n\n<a href="#" onclick="window.__pwned=4">a</a>\n',
      { title: 'Evil' },
    );
    await signIn();
    const violations: string[] = [];
    page.on('console', (message) => violations.push(message.text()));
    await page.goto(`${t.baseUrl}/console/#/doc/xss/evil.md`);
    await page.locator('#doc-title').getByText('Evil').waitFor();
    await page.locator('.markdown a', { hasText: 'click' }).click();
    await page.locator('.markdown a', { hasText: 'a' }).click();
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(
      await page.locator('.markdown script, .markdown [onerror], .markdown [onclick]').count(),
    ).toBe(0);
    expect(await page.locator('.markdown a[href^="javascript"]').count()).toBe(0);
  });

  it('opens ids with spaces, #, %, ? and non-ASCII letters, and follows links between them', async () => {
    const odd = 'odd/a b#c%d?e/ünï 文档.md';
    await put(odd, '# Odd\n\nBack to [the other](../plain.md).', { title: 'Odd one' });
    await put('odd/plain.md', '# Plain\n', { title: 'Plain' });
    await signIn();
    await page.getByRole('link', { name: 'Browse' }).click();
    await page.getByRole('link', { name: 'Odd one' }).click();
    await page.locator('#doc-title').getByText('Odd one').waitFor();
    expect(await page.getByLabel('MCP resource URI').inputValue()).toBe(`kb://${odd}`);
    await page.reload();
    await page.locator('#doc-title').getByText('Odd one').waitFor();
    await page.locator('.markdown').getByRole('link', { name: 'the other' }).click();
    await page.locator('#doc-title').getByText('Plain').waitFor();
  });

  it('can be used with the keyboard alone', async () => {
    await page.goto(`${t.baseUrl}/console/`);
    // The key field has the focus from the start.
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate('document.activeElement?.id')).toBe('api-key');
    await page.keyboard.type(KEY);
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Browse' }).waitFor();
    // The page takes the focus once it is shown (after the bar is drawn): Tab goes into its
    // content, Shift+Tab back up through the bar.
    await page.waitForFunction("document.activeElement?.id === 'main'");
    await page.keyboard.press('Tab');
    expect(await page.evaluate("document.activeElement?.textContent?.trim() ?? ''")).toBe(
      'All documents',
    );
    const focused: string[] = [];
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Shift+Tab');
      focused.push(await page.evaluate("document.activeElement?.textContent?.trim() ?? ''"));
    }
    expect(focused).toEqual(['Sign out', 'New document', 'Sources', 'Pipeline', 'Changes']);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Changes' }).waitFor();
  });

  it('has no serious or critical accessibility violation on its main pages (axe-core)', async () => {
    await signIn();
    for (const hash of [
      '#/browse',
      '#/doc/guide/intro.md',
      '#/search?q=lighthouse',
      '#/history/guide/intro.md',
      '#/changes',
      '#/pipeline',
      '#/sources',
      '#/edit/guide/intro.md',
    ]) {
      await page.goto(`${t.baseUrl}/console/${hash}`);
      await page.locator('main h1').first().waitFor();
      await page.waitForLoadState('networkidle');
      expect({ hash, violations: await seriousViolations(page) }).toEqual({ hash, violations: [] });
    }
  });

  it('pages through a folder of 10 000 documents, never loading them all', async () => {
    for (let batch = 0; batch < 20; batch++) {
      const items = Array.from({ length: 500 }, (_, i) => ({
        op: 'create',
        document_id: `big/doc-${String(batch * 500 + i).padStart(5, '0')}.md`,
        body: `# Document ${batch * 500 + i}`,
      }));
      await api()
        .post('/documents/bulk')
        .set('Authorization', `Bearer ${KEY}`)
        .send({ items })
        .expect(200);
    }
    await signIn();
    const listings: string[] = [];
    page.on('request', (r) => r.url().includes('/documents?') && listings.push(r.url()));
    await page.goto(`${t.baseUrl}/console/#/browse/big`);
    await page.getByRole('cell', { name: 'big/doc-00000.md' }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(50);
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.getByRole('cell', { name: 'big/doc-00050.md' }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(50);
    expect(listings.every((url) => new URL(url).searchParams.get('limit') === '50')).toBe(true);
  });

  it('shows a 1 MiB document, and a refused create keeps the draft', async () => {
    const big = `# Big\n\n${'All work and no play. '.repeat(47_000)}`.slice(0, 1_000_000);
    await put('sizes/big.md', big, { title: 'Big one' });
    await signIn();
    await page.goto(`${t.baseUrl}/console/#/doc/sizes/big.md`);
    await page.locator('#doc-title').getByText('Big one').waitFor();
    expect((await page.locator('.markdown').textContent())!.length).toBeGreaterThan(990_000);

    await page.goto(`${t.baseUrl}/console/#/new`);
    await page.getByLabel(/^Id/).fill('sizes/big.md');
    await page.getByLabel('Body (markdown)').fill('my draft');
    await page.getByRole('button', { name: 'Save' }).click();
    await page
      .getByRole('alert')
      .getByText(/already exists/)
      .waitFor();
    expect(await page.getByLabel('Body (markdown)').inputValue()).toBe('my draft');
  });

  it('says so when the server stops answering, and recovers when it is back', async () => {
    await signIn();
    await page.getByRole('link', { name: 'Browse' }).waitFor();
    await page.route('**/documents?**', (route) => route.abort('connectionrefused'));
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'Browse' }).click();
    await page
      .getByRole('alert')
      .getByText('The server does not answer; the console keeps trying.')
      .waitFor();
    await page.unroute('**/documents?**');
    await page.goto(`${t.baseUrl}/console/#/browse/guide`);
    await page.reload();
    await page.getByRole('cell', { name: 'guide/intro.md' }).waitFor();
    expect(await page.locator('.banner').count()).toBe(0);
  });

  it('shows a key only what the access policy lets it read, on every page', async () => {
    await put('team-a/plans.md', '# Zanzibar plans\n\nThe zanzibar launch.', { title: 'Zanzibar' });
    await put('team-b/notes.md', '# Team B\n\nOur own notes.', { title: 'Team B notes' });
    await signIn(TEAM_B_KEY);
    await page.getByRole('link', { name: 'team-b/' }).waitFor();
    await page.getByRole('cell', { name: 'team-b/notes.md' }).waitFor();
    const shown = async () => (await page.locator('main').textContent()) ?? '';
    expect(await shown()).not.toMatch(/team-a|guide|Zanzibar/);
    await page.goto(`${t.baseUrl}/console/#/doc/team-a/plans.md`);
    await page
      .getByRole('alert')
      .getByText(/NOT_FOUND/)
      .waitFor();
    expect(await shown()).not.toContain('zanzibar launch');
    await page.goto(`${t.baseUrl}/console/#/search?q=zanzibar&mode=lexical`);
    await page.getByRole('status').getByText('0 results').waitFor();
    await page.goto(`${t.baseUrl}/console/#/changes`);
    await page.locator('tbody tr').first().waitFor();
    expect(await shown()).toContain('team-b/notes.md');
    expect(await shown()).not.toContain('team-a');
    await page.goto(`${t.baseUrl}/console/#/history/team-a/plans.md`);
    await page
      .getByRole('alert')
      .getByText(/NOT_FOUND/)
      .waitFor();
    // Writing outside its folders is refused, and said so.
    await page.goto(`${t.baseUrl}/console/#/new`);
    await page.getByLabel(/^Id/).fill('team-a/intrusion.md');
    await page.getByLabel('Body (markdown)').fill('no');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').waitFor();
    await api()
      .get('/documents/team-a/intrusion.md')
      .set('Authorization', `Bearer ${KEY}`)
      .expect(404);
  });

  it('sends a user whose key stops working back to sign-in with the reason', async () => {
    await signIn();
    await page.getByRole('link', { name: 'Browse' }).waitFor();
    await page.evaluate(
      "sessionStorage.setItem('agent-data.console.key', 'revoked-key-0123456789abcdef012')",
    );
    await page.reload();
    await page.getByLabel('API key').waitFor();
    // The sign-in page, with the server's own reason, and the dead key forgotten.
    expect(await page.getByRole('status').textContent()).toBe(
      'You were signed out: the API key is not valid',
    );
    expect(await page.getByRole('button', { name: 'Sign in' }).isVisible()).toBe(true);
    expect(await page.getByRole('link', { name: 'Browse' }).count()).toBe(0);
    expect(await page.evaluate("sessionStorage.getItem('agent-data.console.key')")).toBeNull();
  });
});

describeInBrowser('the console signing in through an OAuth issuer', () => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let idp: OidcProvider;
  let browser: Browser;

  beforeAll(async () => {
    buildConsole();
    const port = await getRandomPort('127.0.0.1');
    // Tokens live 8 s: long enough to sign in and look around, short enough to see one expire.
    idp = await startOidcProvider([
      '--console-redirect',
      `http://127.0.0.1:${port}/console/`,
      '--token-ttl',
      '8',
    ]);
    t = await startTestApp({
      PORT: String(port),
      OAUTH_ISSUER: idp.issuer,
      CONSOLE_OAUTH_CLIENT_ID: 'kb-console',
      OAUTH_CLOCK_SKEW_SECONDS: '0',
    });
    browser = await launchChromium(CHROMIUM!);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await idp?.stop();
  });

  it('signs in with authorization code and PKCE, and uses the token', async () => {
    const page = await browser.newPage();
    const config = await request(t.baseUrl).get('/console/config.json').expect(200);
    expect(config.body.oauth).toMatchObject({ client_id: 'kb-console', scope: 'kb.admin' });
    const csp = (await request(t.baseUrl).get('/console/')).headers['content-security-policy'];
    expect(csp).toContain(`connect-src 'self' ${idp.issuer}`);

    await page.goto(`${t.baseUrl}/console/`);
    await page.getByRole('button', { name: /Sign in with 127\.0\.0\.1/ }).click();
    // The issuer's own pages: sign in (any name), then consent.
    for (let step = 0; step < 4 && !page.url().startsWith(t.baseUrl); step++) {
      await page.waitForLoadState('domcontentloaded');
      if (await page.locator('input[name="login"]').count()) {
        await page.fill('input[name="login"]', 'carol');
        await page.fill('input[name="password"]', 'any');
      }
      await Promise.all([
        page.waitForNavigation(),
        page.locator('form button, form [type=submit]').first().click(),
      ]);
    }
    await page.getByRole('link', { name: 'Browse' }).waitFor();
    // The code is gone from the address; the token is what the API calls carry.
    expect(page.url()).not.toContain('code=');
    await page.getByRole('heading', { name: 'All documents' }).waitFor();

    // The token expires: the next call sends the user back to sign-in, saying why.
    await new Promise((resolve) => setTimeout(resolve, 9_000));
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'Browse' }).click();
    await page.getByText(/You were signed out: .*expired/i).waitFor();
    await page.getByRole('button', { name: /Sign in with/ }).waitFor();
    await page.close();
  });
});
