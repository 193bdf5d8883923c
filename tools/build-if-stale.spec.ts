import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * tools/build-if-stale.js run as `npm start` runs it, in a tree of its own whose `build`
 * script counts its runs and writes the outputs the server needs.
 */
const SCRIPT = join(__dirname, 'build-if-stale.js');
const BUILD = [
  "const fs = require('fs');",
  "for (const d of ['dist/src/cli', 'dist/console', 'dist/apps']) fs.mkdirSync(d, { recursive: true });",
  "for (const f of ['dist/src/main.js', 'dist/src/cli/main.js', 'dist/console/index.html']) fs.writeFileSync(f, '');",
  "fs.appendFileSync('builds', 'x');",
].join(' ');

describe('build-if-stale', () => {
  let root: string;
  const run = () => execFileSync(process.execPath, [SCRIPT], { cwd: root, encoding: 'utf8' });
  const builds = () => readFileSync(join(root, 'builds'), 'utf8').length;
  /** Sets a path's times back a minute: written before the last build began. */
  const age = (path: string) => {
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(root, path), past, past);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'build-if-stale-'));
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ scripts: { build: `node -e "${BUILD}"` } }),
    );
    mkdirSync(join(root, 'src', 'cli'), { recursive: true });
    writeFileSync(join(root, 'src', 'main.ts'), '');
    writeFileSync(join(root, 'src', 'cli', 'main.ts'), '');
    for (const path of ['package.json', 'src/main.ts', 'src/cli/main.ts', 'src/cli', 'src'])
      age(path);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('builds a tree never built, then not again while nothing changes', () => {
    expect(run()).toContain('build: no build recorded, building');
    expect(builds()).toBe(1);
    expect(run()).toContain('build: current');
    expect(run()).toContain('build: current');
    expect(builds()).toBe(1);
  });

  it('builds again after a source is edited, added or removed', () => {
    run();
    writeFileSync(join(root, 'src', 'cli', 'main.ts'), 'edited');
    expect(run()).toContain('build: src/cli/main.ts changed, building');
    expect(builds()).toBe(2);

    writeFileSync(join(root, 'src', 'new.ts'), '');
    age('src/new.ts');
    expect(run()).toContain('build: src changed, building'); // the folder's entries changed
    expect(builds()).toBe(3);

    unlinkSync(join(root, 'src', 'new.ts'));
    expect(run()).toContain('build: src changed, building');
    expect(builds()).toBe(4);
    expect(run()).toContain('build: current');
  });

  it('builds again after package.json changes or an output is gone', () => {
    run();
    writeFileSync(join(root, 'package.json'), readFileSync(join(root, 'package.json')));
    expect(run()).toContain('build: package.json changed, building');
    rmSync(join(root, 'dist', 'src'), { recursive: true });
    expect(run()).toContain('build: dist/src/main.js is missing, building');
    expect(builds()).toBe(3);
    expect(run()).toContain('build: current');
  });

  it('fails with the build, and builds again the next time', () => {
    run();
    writeFileSync(join(root, 'src', 'main.ts'), 'edited');
    const good = readFileSync(join(root, 'package.json'));
    writeFileSync(join(root, 'package.json'), JSON.stringify({ scripts: { build: 'exit 3' } }));
    expect(() => run()).toThrow(expect.objectContaining({ status: 3 }));
    writeFileSync(join(root, 'package.json'), good);
    expect(run()).toContain('building');
    expect(builds()).toBe(2);
  });
});
