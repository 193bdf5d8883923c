import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

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
