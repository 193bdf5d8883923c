import { build } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Frame, Page } from 'playwright-core';
import request from 'supertest';
import { startTestApp, type TestApp } from './support/app';
import { findChromium, launchChromium } from './support/browser';
import { APPS_CAPABILITIES, buildViews } from './support/mcp-apps';
import type { Json } from './support/mcp-http';
import { modernPost } from './support/mcp-modern';
import { waitFor } from './support/wait';

const chromium = findChromium();
const HOSTILE = [
  '# Hostile',
  '',
  '<script>window.pwned = "script"</script>',
  '<img src="x" onerror="window.pwned = \'onerror\'">',
  '',
  '[a trap](javascript:window.pwned=%22link%22)',
  '',
  'See the [setup guide](setup.md).',
].join('\n');

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

  /** One request to the server as an Apps host of the 2026 era; the result or the error. */
  const mcp = async (method: string, params: Record<string, unknown>) => {
    const response = await modernPost(t.baseUrl, '/mcp', method, params, {
      meta: { 'io.modelcontextprotocol/clientCapabilities': APPS_CAPABILITIES },
    });
    const body = response.body as Json;
    if (body.error) throw new Error(body.error.message);
    return body.result;
  };

  /** Opens a fresh host page with the view of `uri` showing `tool`'s real answer to `args`. */
  const show = async (uri: string, tool: string, args: Record<string, unknown>) => {
    page = await browser.newPage();
    await page.exposeFunction('hostCallTool', (params: Json) => mcp('tools/call', params));
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
    await page.evaluate(([c, a, r]) => (globalThis as Json).startView(c, a, r), [
      content,
      args,
      result,
    ] as const);
    return waitFor(() => page.frames().find((f) => f !== page.mainFrame()), 'the view frame');
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
});
