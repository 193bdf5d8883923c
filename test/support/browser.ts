import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

/**
 * The Chromium the browser tests drive: `CHROMIUM_PATH`, else the first of `chromium`,
 * `chromium-browser`, `google-chrome` on the PATH (Debian: `apt-get install chromium`).
 * Playwright's own download does not work here, so nothing is downloaded.
 */
export function findChromium(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    try {
      const path = execFileSync('which', [name], { encoding: 'utf8' }).trim();
      if (path !== '') return path;
    } catch {
      // not on the PATH
    }
  }
  return undefined;
}

export async function launchChromium(executablePath: string): Promise<Browser> {
  // --no-sandbox: the tests run as root in CI containers, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath, args: ['--no-sandbox'] });
}

/** Builds the console into dist/console (esbuild, about a second) so the tests never see a stale one. */
export function buildConsole(): void {
  execFileSync(process.execPath, [join(__dirname, '..', '..', 'console', 'build.mjs')], {
    stdio: 'ignore',
  });
}

/** Opens the console at `baseUrl` and signs in with an API key. */
export async function signInToConsole(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * The serious and critical accessibility violations axe-core finds on the page as it is now
 * (`id (impact, n nodes)`). Evaluated through the DevTools protocol: the page's CSP (no inline
 * script) stays on.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const found = (await page.evaluate(
    'axe.run().then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })))',
  )) as Array<{ id: string; impact: string; nodes: number }>;
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}, ${v.nodes} nodes)`);
}
