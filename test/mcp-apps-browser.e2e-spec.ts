import { build } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Frame, Locator, Page } from 'playwright-core';
import request from 'supertest';
import { startTestApp, type TestApp } from './support/app';
import { findChromium, launchChromium } from './support/browser';
import { APPS_CAPABILITIES, buildViews } from './support/mcp-apps';
import type { Json } from './support/mcp-http';
import { modernPost } from './support/mcp-modern';
import { waitFor } from './support/wait';

const chromium = findChromium();
/** Each way a body could try to run something sets `window.pwned` and opens a dialog. */
const HOSTILE = [
  '# Hostile',
  '',
  '<script>window.pwned = "script"; alert("script")</script>',
  '<img src="x" onerror="window.pwned = \'onerror\'; alert(\'onerror\')">',
  '<p onclick="window.pwned = \'click\'; alert(1)" onmouseover="window.pwned = \'hover\'">Press here</p>',
  '',
  '[a trap](javascript:window.pwned=%22link%22;alert%281%29)',
  '',
  'See the [setup guide](setup.md).',
].join('\n');
/**
 * How long one step may take before it fails naming what it waited for: well inside the
 * test's own time, so a view that never shows something says what instead of timing out.
 */
const STEP_MS = 10_000;

/**
 * The views in a real browser (docs/mcp.md, "Apps (views in the chat)"): a host page built on
 * the ext-apps AppBridge loads each view in a sandboxed frame under the CSP it declares and
 * hands it a real tool result from the server under test; the view renders it, calls back
 * through the host, reports its size, and runs nothing a document body carries.
 */
(chromium ? describe : describe.skip)('MCP Apps views in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  /** The tools/call requests the view sent through the host, in order. */
  let toolCalls: Json[];
  /** The messages of the dialogs any frame of the page opened. */
  let dialogs: string[];

  /** One request to the server as an Apps host of the 2026 era; the result or the error. */
  const mcp = async (method: string, params: Record<string, unknown>) => {
    const response = await modernPost(t.baseUrl, '/mcp', method, params, {
      meta: { 'io.modelcontextprotocol/clientCapabilities': APPS_CAPABILITIES },
    });
    const body = response.body as Json;
    if (body.error) throw new Error(body.error.message);
    return body.result;
  };

  /**
   * Opens a fresh host page with the view of `uri` showing `tool`'s real answer to `args`, in
   * a frame sandboxed with `sandbox`.
   */
  const show = async (
    uri: string,
    tool: string,
    args: Record<string, unknown>,
    sandbox = 'allow-scripts',
  ) => {
    page = await browser.newPage();
    page.setDefaultTimeout(STEP_MS);
    toolCalls = [];
    dialogs = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.exposeFunction('hostCallTool', (params: Json) => {
      toolCalls.push(params);
      return mcp('tools/call', params);
    });
    await page.exposeFunction('hostReadResource', (params: Json) => mcp('resources/read', params));
    const host = await build({
      entryPoints: [join(__dirname, 'support', 'apps-host-page.mjs')],
      bundle: true,
      write: false,
      format: 'iife',
      logLevel: 'silent',
    });
    await page.setContent('<!doctype html><html lang="en"><title>host</title><body></body></html>');
    await page.addScriptTag({ content: host.outputFiles[0].text });
    const [content] = (await mcp('resources/read', { uri })).contents;
    const result = await mcp('tools/call', { name: tool, arguments: args });
    await page.evaluate(([c, a, r, s]) => (globalThis as Json).startView(c, a, r, s), [
      content,
      args,
      result,
      sandbox,
    ] as const);
    return waitFor(() => page.frames().find((f) => f !== page.mainFrame()), 'the view frame');
  };

  /** Waits until the view shows `locator`; fails naming `what` it never showed. */
  const see = async (locator: Locator, what: string) => {
    try {
      await locator.waitFor({ timeout: STEP_MS });
    } catch (error) {
      throw new Error(`the view never showed ${what}: ${(error as Error).message}`);
    }
  };

  const events = () => page.evaluate(() => (globalThis as Json).hostEvents) as Promise<Json>;

  /** Serious and critical axe-core findings inside the view's frame. */
  const violations = async (frame: Frame) => {
    await frame.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
    const found = (await frame.evaluate(
      'axe.run(document).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))',
    )) as Array<{ id: string; impact: string }>;
    return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  };

  const screenshot = async (name: string) => {
    if (process.env.APPS_SCREENSHOTS !== '1') return;
    const dir = join(__dirname, '..', 'docs', 'images');
    mkdirSync(dir, { recursive: true });
    await page.locator('iframe').screenshot({ path: join(dir, name) });
  };

  beforeAll(async () => {
    buildViews();
    t = await startTestApp({ VECTOR_SYNC_ENABLED: 'true' });
    const write = (document_id: string, body: string, metadata?: Json) =>
      request(t.baseUrl)
        .post('/documents')
        .send({ document_id, body, ...(metadata ? { metadata } : {}) })
        .expect(201);
    await write(
      'guide/intro.md',
      '# Introduction\n\n## Installing\n\nThe quokka installer needs Node 20. Read the [setup guide](setup.md) next, or [the Node site](https://nodejs.org/).',
      { source_uri: 'https://example.org/guide/intro' },
    );
    await write('guide/setup.md', '# Setup\n\nRun the quokka installer, then sign in.');
    await write('guide/hostile.md', HOSTILE);
    await waitFor(
      async () => {
        const found = await mcp('tools/call', {
          name: 'search_knowledge',
          arguments: { query: 'quokka installer', mode: 'lexical' },
        });
        return JSON.parse(found.content[0].text).count >= 2;
      },
      'the documents indexed',
      60_000,
    );
    browser = await launchChromium(chromium!);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  afterEach(() => page?.close());

  it('search results: hits rendered, a hit read as a resource, a link followed, size reported', async () => {
    const frame = await show('ui://agent-data/search-results', 'search_knowledge', {
      query: 'quokka installer',
      mode: 'lexical',
    });
    await frame.getByRole('heading', { name: 'Results for “quokka installer”' }).waitFor();
    await frame.getByText('Installing').first().waitFor();
    expect(await frame.locator('.snippet mark').count()).toBeGreaterThan(0);
    expect(await violations(frame)).toEqual([]);
    await screenshot('apps-search-results.png');
    await frame.getByRole('button', { name: 'Introduction' }).click();
    await frame.getByText('The quokka installer needs Node 20.').waitFor();
    await frame.getByRole('link', { name: 'the Node site' }).click();
    await frame.getByRole('link', { name: 'setup guide' }).click();
    await frame.getByText('Run the quokka installer, then sign in.').waitFor();
    const seen = await events();
    expect(seen.initialized).toBe(true);
    expect(seen.links).toEqual(['https://nodejs.org/']);
    expect(seen.sizes.some((size: Json) => size.height > 0)).toBe(true);
  });

  it('document view: its provenance and revision shown; an edit saves at that revision; a concurrent write is a conflict said plainly, the draft kept', async () => {
    const frame = await show('ui://agent-data/document', 'get_document', {
      document_id: 'guide/intro.md',
    });
    await see(frame.locator('#doc-title', { hasText: 'Introduction' }), 'the title');
    await see(frame.getByText('The quokka installer needs Node 20.'), 'the rendered body');
    await see(frame.getByText('https://example.org/guide/intro'), 'the source_uri');
    expect(await frame.getByTestId('revision').textContent()).toBe('1');
    expect(await violations(frame)).toEqual([]);
    await screenshot('apps-document.png');

    await frame.getByRole('button', { name: 'Edit' }).click();
    await frame.getByLabel('Markdown').fill('# Introduction\n\nEdited in the view.');
    await frame.getByRole('button', { name: 'Save as revision 2' }).click();
    await see(frame.getByText('Edited in the view.'), 'the saved body');
    expect(await frame.getByTestId('revision').textContent()).toBe('2');
    expect(toolCalls.find((call) => call.name === 'update_document')).toMatchObject({
      arguments: {
        document_id: 'guide/intro.md',
        content: '# Introduction\n\nEdited in the view.',
        expected_revision: 1,
      },
    });

    // Someone else writes revision 3 while the view edits revision 2: the save is refused.
    await frame.getByRole('button', { name: 'Edit' }).click();
    const elsewhere = await request(t.baseUrl)
      .put('/documents/guide/intro.md')
      .set('If-Match', '"2"')
      .send({ body: '# Introduction\n\nChanged elsewhere.' })
      .expect(200);
    expect(elsewhere.body.revision).toBe(3);
    await frame.getByLabel('Markdown').fill('# Introduction\n\nMy late edit.');
    await frame.getByRole('button', { name: 'Save as revision 3' }).click();
    await see(
      frame
        .getByRole('alert')
        .getByText(
          /Not saved: someone changed this document after revision 2 \(it is now at revision 3\)/,
        ),
      'the conflict',
    );
    expect(await frame.getByLabel('Markdown').inputValue()).toBe('# Introduction\n\nMy late edit.');
    expect(
      toolCalls
        .filter((call) => call.name === 'update_document')
        .map((call) => call.arguments.expected_revision),
    ).toEqual([1, 2]);
    const stored = await request(t.baseUrl).get('/documents/guide/intro.md').expect(200);
    expect(stored.body).toMatchObject({
      revision: 3,
      body: '# Introduction\n\nChanged elsewhere.',
    });
    expect(await violations(frame)).toEqual([]);

    await frame.getByRole('button', { name: 'Load the current version' }).click();
    await see(frame.getByText('Changed elsewhere.'), 'the current version');
    expect(await frame.getByTestId('revision').textContent()).toBe('3');
    const seen = await events();
    expect(seen.initialized).toBe(true);
    expect(seen.sizes.some((size: Json) => size.height > 0)).toBe(true);
  });

  it('a hostile body runs nothing: its script, handlers and javascript: link are removed, and what slipped past the sanitiser would meet the CSP', async () => {
    // Modals allowed, so that a dialog the body opened would be seen.
    const frame = await show(
      'ui://agent-data/document',
      'get_document',
      { document_id: 'guide/hostile.md' },
      'allow-scripts allow-modals',
    );
    await see(frame.locator('#doc-title', { hasText: 'Hostile' }), 'the title');
    const bait = frame.getByText('Press here');
    await see(bait, 'the paragraph that had handlers');
    expect(await frame.locator('.markdown').innerHTML()).not.toMatch(
      /<script|\son\w+=|javascript:/i,
    );
    await bait.hover();
    await bait.click();
    // Its javascript: target removed, the trap is no longer a link: clicking it does nothing.
    await frame.getByText('a trap').click();

    // A sanitiser has to miss only once: the view's CSP stops a handler or script that got in.
    await frame.evaluate(async () => {
      const document = (globalThis as Json).document;
      const image = document.createElement('img');
      image.setAttribute('onerror', "window.pwned = 'slipped handler'");
      await new Promise((loaded) => {
        image.addEventListener('error', loaded); // after the inline handler, had it run
        image.src = 'x';
        document.body.append(image);
      });
      const script = document.createElement('script');
      script.textContent = "window.pwned = 'slipped script'";
      document.body.append(script);
    });

    await frame.getByRole('link', { name: 'setup guide' }).click();
    await see(frame.getByText('Run the quokka installer, then sign in.'), 'the linked document');
    expect(dialogs).toEqual([]);
    expect(await frame.evaluate(() => (globalThis as Json).pwned)).toBeUndefined();
    expect((await events()).links).toEqual([]);
  });
});
