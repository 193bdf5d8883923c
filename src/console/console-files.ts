import { Injectable, Logger } from '@nestjs/common';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

/** One file of the built console, held in memory (the whole console is some 130 KB). */
export interface ConsoleFile {
  readonly bytes: Buffer;
  readonly type: string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * The console `npm run build` writes into dist/console (console/build.mjs): read once at
 * start-up, so a request never touches the disk and no path from a request is ever joined to
 * a directory. Absent when the console was not built; the routes then say so.
 */
@Injectable()
export class ConsoleFiles {
  readonly index: ConsoleFile | undefined;
  private readonly assets = new Map<string, ConsoleFile>();

  constructor() {
    const dir = builtConsoleDir();
    if (dir === undefined) {
      new Logger('Console').warn('the console is not built (npm run build): /console answers 404');
      this.index = undefined;
      return;
    }
    this.index = { bytes: readFileSync(join(dir, 'index.html')), type: TYPES['.html'] };
    for (const name of readdirSync(join(dir, 'assets'))) {
      const type = TYPES[extname(name)];
      if (type !== undefined) {
        this.assets.set(name, { bytes: readFileSync(join(dir, 'assets', name)), type });
      }
    }
  }

  asset(name: string): ConsoleFile | undefined {
    return this.assets.get(name);
  }
}

/** dist/console, seen from the build (dist/src/console) or from the sources (src/console). */
function builtConsoleDir(): string | undefined {
  const candidates = [
    join(__dirname, '..', '..', 'console'),
    join(__dirname, '..', '..', 'dist', 'console'),
  ];
  return candidates.find(
    (dir) => existsSync(join(dir, 'index.html')) && existsSync(join(dir, 'assets')),
  );
}
