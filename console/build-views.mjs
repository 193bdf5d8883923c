// Builds the MCP Apps views (console/src/views, Preact, with the console's markdown
// rendering) into dist/apps: one self-contained HTML document per view, which the server
// serves as a ui:// resource. `npm run build` runs it after the console's build.
//
// A view is one HTML document handed to the host as text (the MCP Apps spec's
// text/html;profile=mcp-app); the host renders it in a sandboxed frame with no origin of its
// own, so there is no server to load a script file from, and naming our server in the CSP
// would be an outside domain. The script and the style are therefore inside the document,
// and the document's own Content-Security-Policy allows exactly them, by hash: no
// 'unsafe-inline', so a script or handler that slipped into a rendered body never runs.
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from './esbuild-options.mjs';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'dist', 'apps');
const VIEWS = [
  { entry: 'search-results', title: 'Agent Data search results' },
  { entry: 'document', title: 'Agent Data document' },
];

const result = await build({
  ...BUNDLE_OPTIONS,
  entryPoints: VIEWS.map((view) => join(here, 'src', 'views', `${view.entry}.tsx`)),
});

const sha256 = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const escapeHtml = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const sizes = [];
for (const view of VIEWS) {
  const file = (extension) =>
    result.outputFiles.find((f) => f.path.endsWith(`/${view.entry}.${extension}`))?.text ?? '';
  const script = file('js');
  const style = file('css');
  // Inside <script> and <style> nothing is escaped: a closing tag in the text would end them.
  if (/<\/script/i.test(script) || /<\/style/i.test(style)) {
    throw new Error(`view ${view.entry}: the bundle holds a closing tag`);
  }
  const policy = [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<title>${escapeHtml(view.title)}</title>
<style>${style}</style>
</head>
<body>
<main id="view"></main>
<script type="module">${script}</script>
</body>
</html>
`;
  writeFileSync(join(out, `${view.entry}.html`), html);
  const bytes = Buffer.from(html);
  sizes.push(
    `${view.entry}.html ${(bytes.length / 1024).toFixed(1)} KB, ${(gzipSync(bytes).length / 1024).toFixed(1)} KB gzipped`,
  );
}
process.stdout.write(`views built into dist/apps: ${sizes.join('; ')}\n`);
