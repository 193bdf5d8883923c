import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** An hour ago: files written with this time are settled (not just modified) for a listing. */
export const AN_HOUR_AGO = new Date(Date.now() - 3_600_000);

/**
 * Writes `relative` (`/`-separated) under `root`, its folders made, with a modification time
 * of `mtime` (an hour ago unless told).
 */
export function writeFile(
  root: string,
  relative: string,
  content: string | Buffer,
  mtime: Date = AN_HOUR_AGO,
): string {
  const path = join(root, ...relative.split('/'));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  utimesSync(path, mtime, mtime);
  return path;
}

/** Temporary folders for one spec file, each filled from `{ relative: content }`, removed after. */
export function temporaryFolders(prefix: string) {
  const made: string[] = [];
  return {
    make(files: Record<string, string | Buffer> = {}): string {
      const root = mkdtempSync(join(tmpdir(), prefix));
      made.push(root);
      for (const [relative, content] of Object.entries(files)) writeFile(root, relative, content);
      return root;
    },
    removeAll(): void {
      for (const root of made.splice(0)) rmSync(root, { recursive: true, force: true });
    },
  };
}
