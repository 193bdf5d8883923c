import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** What an MCP Apps host declares: the extension, with the HTML profile. */
export const APPS_CAPABILITIES = {
  extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
};

/**
 * Builds the views into dist/apps (esbuild, a second or two) so the server under test
 * serves the views of these sources, never stale ones. Run before the app starts: the
 * server reads them once.
 */
export function buildViews(): void {
  execFileSync(process.execPath, [join(__dirname, '..', '..', 'console', 'build-views.mjs')], {
    stdio: 'ignore',
  });
}
