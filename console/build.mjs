// Builds the operator console (console/src, Preact) into dist/console: one JavaScript and
// one CSS file named by their content's hash, and index.html naming them. `npm run build`
// runs it after the server's build; the server serves dist/console at /console.
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from './esbuild-options.mjs';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'dist', 'console');
const assets = join(out, 'assets');

const result = await build({
  ...BUNDLE_OPTIONS,
  entryPoints: [join(here, 'src', 'main.tsx')],
});

rmSync(out, { recursive: true, force: true });
mkdirSync(assets, { recursive: true });
const names = {};
const sizes = [];
for (const file of result.outputFiles) {
  const extension = file.path.endsWith('.css') ? 'css' : 'js';
  const hash = createHash('sha256').update(file.contents).digest('hex').slice(0, 12);
  const name = `app-${hash}.${extension}`;
  writeFileSync(join(assets, name), file.contents);
  names[extension] = name;
  sizes.push(
    `${name} ${(file.contents.length / 1024).toFixed(1)} KB, ${(gzipSync(file.contents).length / 1024).toFixed(1)} KB gzipped`,
  );
}
const html = readFileSync(join(here, 'index.html'), 'utf8')
  .replace('__JS__', names.js)
  .replace('__CSS__', names.css);
writeFileSync(join(out, 'index.html'), html);
process.stdout.write(`console built into dist/console: ${sizes.join('; ')}\n`);
