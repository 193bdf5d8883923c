import type { BigIntStats, Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { refusalOf, UNUSABLE_IN_IDS } from './file-document';

/**
 * The walk of a folder whose files become documents, the same for `agent-data import` and for
 * a folder source the server keeps in sync: which files, under which keys, and what is left
 * out and why.
 */

/** A file of the folder that can become a document. */
export interface FolderFile {
  /** Its path: the folder's path joined with `relative`. */
  readonly path: string;
  /** Its path relative to the folder, `/`-separated (`guides/setup.md`): the document's key. */
  readonly relative: string;
  /** Its size, modification and change times (ns) and inode when it was listed: a version. */
  readonly size: number;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
  readonly ino: bigint;
}

/** A file or folder left out, and why. */
export interface Skipped {
  readonly relative: string;
  readonly reason: string;
}

/** A folder that could not be listed, or a file that could not be examined: what it holds is unknown. */
export interface Unreadable {
  readonly relative: string;
  readonly kind: 'folder' | 'file';
  readonly error: NodeJS.ErrnoException;
}

export interface FolderListing {
  /** In the order of a depth-first walk, each folder's entries by name. */
  readonly files: FolderFile[];
  readonly skipped: Skipped[];
  readonly unreadable: Unreadable[];
}

/** The two calls the walk makes, replaceable to test failures the machine cannot produce. */
export interface FolderFileSystem {
  readdir(path: string): Promise<Dirent[]>;
  lstat(path: string): Promise<BigIntStats>;
}

export const NODE_FOLDER_FILE_SYSTEM: FolderFileSystem = {
  readdir: (path) => readdir(path, { withFileTypes: true }),
  lstat: (path) => lstat(path, { bigint: true }),
};

export interface FolderWalkOptions {
  /** The body limit of a document, in bytes: a larger text file is skipped unread. */
  readonly maxBytes: number;
  /**
   * Whether a file, link or special file (by its relative path) belongs to the walk at all:
   * those that do not are left out silently, not stat'ed and not reported as skipped.
   */
  readonly wants?: (relative: string) => boolean;
  /** Whether a whole folder (by its relative path) is left out unlisted. */
  readonly leavesOut?: (relative: string) => boolean;
  readonly signal?: AbortSignal;
  /** Entries listed at most (files, folders and the rest): beyond, the walk throws. */
  readonly maxEntries?: number;
  /** File system calls in flight at once; 32 by default. */
  readonly concurrency?: number;
  readonly fs?: FolderFileSystem;
}

type Outcome =
  | { readonly file: FolderFile }
  | { readonly skipped: Skipped }
  | { readonly unreadable: Unreadable };

/**
 * Every file under `root` that can become a document, and what was left out: hidden files and
 * folders (`.git`, `.obsidian`), symbolic links (never followed: a link loop cannot loop),
 * other types, names a document id cannot hold, files over `maxBytes` (a text file) or 64 MiB
 * (one to convert). Files are stat'ed, never read. A folder or file that vanishes during the
 * walk is simply not there; one that cannot be listed or stat'ed is `unreadable`. Throws when
 * the root itself cannot be listed, when there are more than `maxEntries` entries, or with
 * the signal's reason once aborted.
 */
export async function folderFiles(
  root: string,
  options: FolderWalkOptions,
): Promise<FolderListing> {
  const fs = options.fs ?? NODE_FOLDER_FILE_SYSTEM;
  const wants = options.wants ?? (() => true);
  const leavesOut = options.leavesOut ?? (() => false);
  const maxEntries = options.maxEntries ?? Number.POSITIVE_INFINITY;
  const limit = limiter(options.concurrency ?? 32);
  let entriesSeen = 0;
  // Set when any branch fails, so that the others stop at their next call instead of walking on.
  let halted: unknown = null;
  const call = <T>(task: () => Promise<T>): Promise<T> =>
    limit(() => {
      if (halted !== null) throw halted;
      options.signal?.throwIfAborted();
      return task();
    });

  const visitFolder = async (folder: string, relative: string): Promise<Outcome[]> => {
    let entries: Dirent[];
    try {
      entries = await call(() => fs.readdir(folder));
    } catch (error) {
      if (relative === '' || !isFileSystemError(error)) throw error;
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [];
      return [{ unreadable: { relative, kind: 'folder', error } }];
    }
    entriesSeen += entries.length;
    if (entriesSeen > maxEntries) {
      throw new Error(`the folder holds more than ${maxEntries} entries, the most a walk lists`);
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    const outcomes = await Promise.all(
      entries.map((entry) =>
        visitEntry(
          entry,
          join(folder, entry.name),
          relative === '' ? entry.name : `${relative}/${entry.name}`,
        ),
      ),
    );
    return outcomes.flat();
  };

  const visitEntry = async (entry: Dirent, path: string, relative: string): Promise<Outcome[]> => {
    if (entry.name.startsWith('.')) return [{ skipped: { relative, reason: 'hidden' } }];
    if (UNUSABLE_IN_IDS.test(entry.name)) {
      return [
        {
          skipped: {
            relative: JSON.stringify(relative),
            reason: 'its name holds a control character or a backslash, which no id may',
          },
        },
      ];
    }
    if (entry.isDirectory()) return leavesOut(relative) ? [] : visitFolder(path, relative);
    // An entry whose type the file system did not say (some network file systems) may be a
    // folder: its lstat tells.
    const typed = knownType(entry);
    if (typed && !wants(relative)) return [];
    if (entry.isSymbolicLink()) {
      return [{ skipped: { relative, reason: 'a symbolic link (not followed)' } }];
    }
    if (typed && !entry.isFile()) return [{ skipped: { relative, reason: 'not a regular file' } }];
    let stats: BigIntStats;
    try {
      stats = await call(() => fs.lstat(path));
    } catch (error) {
      if (!isFileSystemError(error)) throw error;
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [];
      return [{ unreadable: { relative, kind: 'file', error } }];
    }
    if (stats.isDirectory()) return leavesOut(relative) ? [] : visitFolder(path, relative);
    if (!wants(relative)) return [];
    if (stats.isSymbolicLink()) {
      return [{ skipped: { relative, reason: 'a symbolic link (not followed)' } }];
    }
    if (!stats.isFile()) return [{ skipped: { relative, reason: 'not a regular file' } }];
    const size = Number(stats.size);
    const refusal = refusalOf(entry.name, size, options.maxBytes);
    if (refusal !== null) return [{ skipped: { relative, reason: refusal } }];
    const { mtimeNs, ctimeNs, ino } = stats;
    return [{ file: { path, relative, size, mtimeNs, ctimeNs, ino } }];
  };

  let outcomes: Outcome[];
  try {
    outcomes = await visitFolder(root, '');
  } catch (error) {
    halted = error;
    throw error;
  }
  const listing: FolderListing = { files: [], skipped: [], unreadable: [] };
  for (const outcome of outcomes) {
    if ('file' in outcome) listing.files.push(outcome.file);
    else if ('skipped' in outcome) listing.skipped.push(outcome.skipped);
    else listing.unreadable.push(outcome.unreadable);
  }
  return listing;
}

function knownType(entry: Dirent): boolean {
  return (
    entry.isFile() ||
    entry.isDirectory() ||
    entry.isSymbolicLink() ||
    entry.isFIFO() ||
    entry.isSocket() ||
    entry.isBlockDevice() ||
    entry.isCharacterDevice()
  );
}

/** Not `instanceof Error`: errors of Node's own calls come from another realm under jest. */
function isFileSystemError(error: unknown): error is NodeJS.ErrnoException {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as NodeJS.ErrnoException).code === 'string'
  );
}

/** Runs tasks at most `width` at a time, in the order they ask. */
function limiter(width: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active < width) active += 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      // The slot passes to the next waiting task, if any, without being freed in between.
      const next = waiting.shift();
      if (next) next();
      else active -= 1;
    }
  };
}
