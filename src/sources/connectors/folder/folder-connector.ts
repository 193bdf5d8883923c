import { resolve } from 'node:path';
import { documentOfFile, refusalOf } from '../../../conversion/file-document';
import {
  folderFiles,
  NODE_FOLDER_FILE_SYSTEM,
  type FolderFile,
  type FolderFileSystem,
  type FolderListing,
} from '../../../conversion/folder-files';
import type { FolderSourceDeclaration } from '../../source-declaration';
import type {
  Connector,
  Enumeration,
  EnumerationContext,
  KnownItem,
  SourceItem,
} from '../connector';
import type { DebounceTiming } from './debounce';
import { folderProblem } from './folder-path';
import { watchFolder } from './folder-watch';
import { keyFilter, type KeyFilter } from './key-filter';
import { openNoFollow, readSteadily, type OpenFile } from './steady-read';

/** Entries a folder source lists at most (files, folders and the rest, hidden ones included). */
export const MAX_FOLDER_ENTRIES = 200_000;

export interface FolderConnectorOptions {
  /** The file system calls, replaceable to test failures this machine cannot produce. */
  readonly fs?: FolderFileSystem & { readonly open?: OpenFile };
  /** File system calls in flight at once while listing; 32 by default. */
  readonly concurrency?: number;
  readonly maxEntries?: number;
  /** How recent a file's times make its version unsettled (see {@link versionOf}); 3 s. */
  readonly unsettledMs?: number;
  readonly watchTiming?: DebounceTiming;
}

/**
 * A folder on the server's machine. An item per file that can be a document, keyed by its
 * path relative to the folder (`guides/setup.md`), as `agent-data import` names it. Its
 * version is taken from its `lstat` (see {@link versionOf}): listing stats every file and
 * reads none, and a file is read (`load`) only when its version changed. A vanished known key
 * and a new key of the same file (a rename) are reported as a move.
 *
 * A folder inside that cannot be listed (permission denied) does not make the listing
 * incomplete: the known keys under it go to `failed`, kept as they are, while the rest of the
 * folder is synced whole, deletions included. The folder itself missing, not a folder or
 * unreadable throws, and nothing is deleted.
 */
export class FolderConnector implements Connector {
  /** The folder's absolute path (a relative one is taken from the server's working folder). */
  readonly root: string;
  private readonly filter: KeyFilter;
  private readonly fs: FolderFileSystem;
  private readonly open: OpenFile;

  constructor(
    declaration: Pick<FolderSourceDeclaration, 'path' | 'include' | 'exclude'>,
    private readonly options: FolderConnectorOptions = {},
  ) {
    this.root = resolve(declaration.path);
    this.filter = keyFilter(declaration.include, declaration.exclude);
    this.fs = options.fs ?? NODE_FOLDER_FILE_SYSTEM;
    this.open = options.fs?.open ?? openNoFollow;
  }

  async enumerate(context: EnumerationContext): Promise<Enumeration> {
    const problem = await folderProblem(this.root);
    if (problem !== null) throw new Error(problem);
    const listedAt = Date.now();
    let listing: FolderListing;
    try {
      listing = await folderFiles(this.root, {
        maxBytes: context.maxBodyBytes,
        wants: this.filter.wants,
        leavesOut: this.filter.leavesOut,
        signal: context.signal,
        maxEntries: this.options.maxEntries ?? MAX_FOLDER_ENTRIES,
        concurrency: this.options.concurrency,
        fs: this.fs,
      });
    } catch (error) {
      if (context.signal.aborted) throw context.signal.reason;
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== undefined) {
        throw new Error(`the folder ${this.root} cannot be listed (${code})`);
      }
      throw error;
    }

    const items: SourceItem[] = listing.files.map((file) => ({
      key: file.relative,
      version: versionOf(file, listedAt, this.options.unsettledMs),
      uri: file.path,
      load: async () =>
        documentOfFile(
          file.path,
          await readSteadily(this.open, file, context.maxBodyBytes, context.signal),
        ),
    }));
    const failed: Array<{ key: string; reason: string }> = [];
    const skipped = listing.skipped.map(({ relative, reason }) => ({ key: relative, reason }));
    for (const { relative, kind, error } of listing.unreadable) {
      const code = error.code ?? error.message;
      if (kind === 'file') {
        // A type that is never imported would be skipped, whatever it holds.
        const refusal = refusalOf(relative, 0, Infinity);
        if (refusal !== null) skipped.push({ key: relative, reason: refusal });
        else failed.push({ key: relative, reason: `it cannot be examined (${code})` });
        continue;
      }
      skipped.push({ key: relative, reason: `a folder that cannot be listed (${code})` });
      for (const key of context.known.keys()) {
        if (key.startsWith(`${relative}/`) && this.filter.wants(key)) {
          failed.push({ key, reason: `its folder ${relative} cannot be listed (${code})` });
        }
      }
    }
    return {
      complete: true,
      version: `${items.length} files`,
      items,
      moves: movesOf(items, context.known, new Set(failed.map((f) => f.key))),
      failed,
      skipped,
    };
  }

  watch(changed: () => void, onError: (error: Error) => void): () => Promise<void> {
    const watch = watchFolder(this.root, changed, onError, {
      filter: this.filter,
      timing: this.options.watchTiming,
    });
    return () => watch.stop();
  }
}

/**
 * A modification time this close to the listing is not trusted to tell every write (see
 * {@link versionOf}); 3 s covers coarse clocks (a kernel tick, FAT's 2 s) and a little skew.
 */
export const UNSETTLED_MS = 3_000;

/**
 * Size, modification time, change time and inode (`size-mtime-ctime-inode`, times in ns):
 * a write changes it, and so does a file replaced by another of the same size and
 * modification time (`cp -p`, `rsync -t`, `tar x` keep the time; the change time cannot be
 * set). A file modified within {@link UNSETTLED_MS} of the listing could be written again
 * within the same tick of the file system's clock, with the same size, and keep that version
 * unread: its version then names the listing's time too, so that it differs at the next run
 * and the file is read once more (the reconciliation writes nothing when the content is the
 * same).
 */
export function versionOf(
  file: Pick<FolderFile, 'size' | 'mtimeNs' | 'ctimeNs' | 'ino'>,
  listedAtMs: number,
  unsettledMs = UNSETTLED_MS,
): string {
  const version = `${file.size}-${file.mtimeNs}-${file.ctimeNs}-${file.ino}`;
  const recent = BigInt(listedAtMs - unsettledMs) * 1_000_000n;
  const settled = file.mtimeNs < recent && file.ctimeNs < recent;
  return settled ? version : `${version}-unsettled-${listedAtMs}`;
}

/**
 * The file a version was taken of, which a rename keeps: its size, modification time and
 * inode (a rename sets the change time). `null` for a version this connector did not write.
 */
function identityOf(version: string): string | null {
  const match = /^(\d+)-(\d+)-\d+-(\d+)(?:-unsettled-\d+)?$/.exec(version);
  return match === null ? null : `${match[1]}-${match[2]}-${match[3]}`;
}

/**
 * Renames: a known key no longer listed and a new key of the same file (size, modification
 * time and inode), where that identity belongs to one vanished key and one new key only (hard
 * links share an inode). The new key's version differs (a rename sets the change time): it is
 * read once, and its document written only if the content differs.
 */
function movesOf(
  items: readonly SourceItem[],
  known: ReadonlyMap<string, KnownItem>,
  failed: ReadonlySet<string>,
): Array<{ from: string; to: string }> {
  const listed = new Set(items.map((item) => item.key));
  const vanished = new Map<string, string[]>();
  for (const [key, item] of known) {
    const identity = identityOf(item.version);
    if (identity !== null && !listed.has(key) && !failed.has(key)) {
      vanished.set(identity, [...(vanished.get(identity) ?? []), key]);
    }
  }
  if (vanished.size === 0) return [];
  const fresh = new Map<string, string[]>();
  for (const item of items) {
    const identity = identityOf(item.version)!;
    if (!known.has(item.key) && vanished.has(identity)) {
      fresh.set(identity, [...(fresh.get(identity) ?? []), item.key]);
    }
  }
  const moves: Array<{ from: string; to: string }> = [];
  for (const [identity, to] of fresh) {
    const from = vanished.get(identity)!;
    if (from.length === 1 && to.length === 1) moves.push({ from: from[0], to: to[0] });
  }
  return moves;
}
