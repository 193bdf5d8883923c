import { readFile } from 'node:fs/promises';
import { documentOfFile, type SourceDocument } from '../conversion/file-document';
import { folderFiles, type Skipped } from '../conversion/folder-files';

export type { SourceDocument } from '../conversion/file-document';
export type { Skipped } from '../conversion/folder-files';

/** A file of the folder being imported, by its path relative to the folder (`/`-separated). */
export interface SourceFile {
  readonly path: string;
  readonly relative: string;
  readonly size: number;
}

/**
 * Every importable file under `dir`, in byte order of path, and what was left out (see
 * {@link folderFiles}: hidden entries, symbolic links never followed, other types, names a
 * document id cannot hold, files too large), unread. A folder that cannot be listed fails the
 * import: with `--mirror`, what it holds would otherwise be deleted.
 */
export async function sourceFiles(
  dir: string,
  maxBytes: number,
): Promise<{ files: SourceFile[]; skipped: Skipped[] }> {
  const { files, skipped, unreadable } = await folderFiles(dir, { maxBytes });
  if (unreadable.length > 0) throw unreadable[0].error;
  return {
    files: files.map(({ path, relative, size }) => ({ path, relative, size })),
    skipped,
  };
}

/** A file of the folder as a document (see {@link documentOfFile}). Throws naming the problem. */
export async function readSource(file: SourceFile): Promise<SourceDocument> {
  return documentOfFile(file.path, await readFile(file.path));
}
