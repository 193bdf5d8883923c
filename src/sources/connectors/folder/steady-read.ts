import { constants, type BigIntStats } from 'node:fs';
import { open } from 'node:fs/promises';
import { refusalOf } from '../../../conversion/file-document';
import type { FolderFile } from '../../../conversion/folder-files';

/** What reading a file needs of an open file (a `FileHandle`). */
export interface ReadableFile {
  stat(options: { bigint: true }): Promise<BigIntStats>;
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
  close(): Promise<void>;
}

export type OpenFile = (path: string) => Promise<ReadableFile>;

/**
 * Opens for reading without following a symbolic link (a file replaced by a link to something
 * outside the folder since it was listed is refused, ELOOP) and without waiting (a file
 * replaced by a named pipe would block the read until a writer came).
 */
export const openNoFollow: OpenFile = (path) =>
  open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);

/**
 * The bytes of a listed file, read whole while it did not change: its size and modification
 * time must be the same before and after the read, and the bytes as many as its size, or it
 * is read once more; a file still changing then, or gone, throws naming the problem (the item
 * counts as failed and as seen, and is read again at the next run). The content may be newer
 * than the version the file was listed with, never older: its next run reads it again.
 */
export async function readSteadily(
  openFile: OpenFile,
  file: FolderFile,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Buffer> {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    signal.throwIfAborted();
    let handle: ReadableFile;
    try {
      handle = await openFile(file.path);
    } catch (error) {
      throw new Error(openFailure(error as NodeJS.ErrnoException));
    }
    try {
      const before = await handle.stat({ bigint: true });
      if (!before.isFile()) throw new Error('it is no longer a regular file');
      const size = Number(before.size);
      const refusal = refusalOf(file.path, size, maxBytes);
      if (refusal !== null) throw new Error(`it changed since it was listed: ${refusal}`);
      // One byte more than its size: a file that grew while being read fills it.
      const buffer = Buffer.alloc(size + 1);
      let filled = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
        if (filled === buffer.length) break;
        signal.throwIfAborted();
      }
      const after = await handle.stat({ bigint: true });
      if (filled === size && after.size === before.size && after.mtimeNs === before.mtimeNs) {
        return buffer.subarray(0, size);
      }
    } finally {
      await handle.close();
    }
  }
  throw new Error('it kept changing while it was read (it is read again at the next run)');
}

function openFailure(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return 'it vanished between the listing and the reading';
    case 'ELOOP':
      return 'it became a symbolic link since it was listed (not followed)';
    case 'EACCES':
    case 'EPERM':
      return 'it cannot be read (permission denied)';
    default:
      return `it cannot be opened (${error.code ?? error.message})`;
  }
}
