import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  documentOfFile,
  refusalOf,
  UNUSABLE_IN_IDS,
  type SourceDocument,
} from '../conversion/file-document';

export type { SourceDocument } from '../conversion/file-document';

/** A file of the folder being imported, by its path relative to the folder (`/`-separated). */
export interface SourceFile {
  readonly path: string;
  readonly relative: string;
  readonly size: number;
}

/** A file or folder left out, and why. */
export interface Skipped {
  readonly relative: string;
  readonly reason: string;
}

/**
 * Every importable file under `dir`, in byte order of path, and what was left out: hidden
 * files and folders (`.git`, `.obsidian`), symbolic links (never followed: no loop), other
 * types, names a document id cannot hold, files over `maxBytes` (a text file) or 64 MiB (one to
 * convert), unread.
 */
export async function sourceFiles(
  dir: string,
  maxBytes: number,
): Promise<{ files: SourceFile[]; skipped: Skipped[] }> {
  const files: SourceFile[] = [];
  const skipped: Skipped[] = [];
  const visit = async (folder: string, relative: string): Promise<void> => {
    const entries = await readdir(folder, { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(folder, entry.name);
      const rel = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.name.startsWith('.')) {
        skipped.push({ relative: rel, reason: 'hidden' });
      } else if (UNUSABLE_IN_IDS.test(entry.name)) {
        skipped.push({
          relative: JSON.stringify(rel),
          reason: 'its name holds control characters',
        });
      } else if (entry.isSymbolicLink()) {
        skipped.push({ relative: rel, reason: 'a symbolic link (not followed)' });
      } else if (entry.isDirectory()) {
        await visit(path, rel);
      } else if (entry.isFile()) {
        const { size } = await lstat(path);
        const refusal = refusalOf(entry.name, size, maxBytes);
        if (refusal !== null) {
          skipped.push({ relative: rel, reason: refusal });
        } else {
          files.push({ path, relative: rel, size });
        }
      } else {
        skipped.push({ relative: rel, reason: 'not a regular file' });
      }
    }
  };
  await visit(dir, '');
  return { files, skipped };
}

/** A file of the folder as a document (see {@link documentOfFile}). Throws naming the problem. */
export async function readSource(file: SourceFile): Promise<SourceDocument> {
  return documentOfFile(file.path, await readFile(file.path));
}
