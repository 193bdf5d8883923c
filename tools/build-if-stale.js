// The build `npm start` (its prestart) and `npm install` (prepare) ask for: `npm run build`
// when the tree changed since the last build they made, nothing when it did not. Building
// took about 7 of the 9 s of every start, for a tree that had not changed.
//
// A build is current when every input is older than the moment it began: that moment is
// written to dist/.built once the build succeeded (the moment it began, not ended, so that a
// file saved while it ran is built again). An input is a file or folder under src/,
// migrations/ or console/ (a folder's time changes when an entry is added, renamed or
// removed), the two tsconfig files, package.json, or npm's record of what node_modules holds
// (rewritten by every install). An output the server needs that is gone builds again too, from
// scratch: the incremental compiler does not write again what it believes it wrote.
//
// Times are the file system's: a file copied in with an older time than the build's (cp -p,
// an archive) is not seen; `npm run build` always builds.
'use strict';
const { spawnSync } = require('node:child_process');
const {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} = require('node:fs');
const { join } = require('node:path');

const INPUT_FOLDERS = ['src', 'migrations', 'console'];
const INPUT_FILES = [
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'node_modules/.package-lock.json',
];
/** What the server reads of the build: the server and the CLI, the console, the MCP Apps views. */
const OUTPUTS = [
  'dist/src/main.js',
  'dist/src/cli/main.js',
  'dist/console/index.html',
  'dist/apps',
];
const STAMP = 'dist/.built';
const BUILD_INFO = 'dist/.tsbuildinfo';

/**
 * Why the build in `root` is not current (`no build recorded`, `dist/src/main.js is missing`,
 * `src/app.module.ts changed`), or `null` when it is.
 * @param {string} root
 * @returns {string | null}
 */
function whyStale(root) {
  let begun = NaN;
  try {
    begun = Number(readFileSync(join(root, STAMP), 'utf8'));
  } catch {
    // No stamp: never built here by this script.
  }
  if (!Number.isFinite(begun)) return 'no build recorded';
  const missing = OUTPUTS.find((output) => !existsSync(join(root, output)));
  if (missing !== undefined) return `${missing} is missing`;
  for (const file of INPUT_FILES) {
    if ((modified(join(root, file)) ?? -Infinity) >= begun) return `${file} changed`;
  }
  for (const folder of INPUT_FOLDERS) {
    const changed = changedUnder(root, folder, begun);
    if (changed !== undefined) return `${changed} changed`;
  }
  return null;
}

/** The first entry under `relative` (itself included) modified at or after `since`. */
function changedUnder(root, relative, since) {
  const time = modified(join(root, relative));
  if (time === undefined) return undefined;
  if (time >= since) return relative;
  let entries;
  try {
    entries = readdirSync(join(root, relative), { withFileTypes: true });
  } catch {
    return undefined; // a file, not a folder
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules') continue;
    const changed = changedUnder(root, `${relative}/${entry.name}`, since);
    if (changed !== undefined) return changed;
  }
  return undefined;
}

function modified(path) {
  try {
    return lstatSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Builds `root` when it is not current; the exit status is the build's. */
function buildIfStale(root) {
  const why = whyStale(root);
  if (why === null) {
    process.stdout.write(
      'build: current, nothing changed since it began (npm run build forces one)\n',
    );
    return 0;
  }
  process.stdout.write(`build: ${why}, building\n`);
  if (why.endsWith('is missing')) rmSync(join(root, BUILD_INFO), { force: true });
  const begun = Date.now();
  // npm names itself to the scripts it runs; run by hand, the npm on the PATH.
  const npm = process.env.npm_execpath;
  const result = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (result.error) process.stderr.write(`build: npm could not be run (${result.error.message})\n`);
  if (result.status !== 0) return result.status ?? 1;
  writeFileSync(join(root, STAMP), `${begun}\n`);
  return 0;
}

if (require.main === module) process.exitCode = buildIfStale(process.cwd());

module.exports = { whyStale };
