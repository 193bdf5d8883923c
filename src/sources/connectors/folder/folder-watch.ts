import { realpath } from 'node:fs/promises';
import { basename, relative, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { refusalOf } from '../../../conversion/file-document';
import { debounce, WATCH_TIMING, type DebounceTiming } from './debounce';
import { folderProblem } from './folder-path';
import { keyFilter, type KeyFilter } from './key-filter';

export interface FolderWatchOptions {
  /** The source's include and exclude globs: a change to a file they refuse is not one. */
  readonly filter?: KeyFilter;
  readonly timing?: DebounceTiming;
  /** Folders deeper than this are not watched (their changes wait for the periodic sync). */
  readonly depth?: number;
}

export interface FolderWatch {
  /** Settles once the folder is watched (its tree listed), or the watch has failed or stopped. */
  readonly ready: Promise<void>;
  /** Closes the watcher and forgets a pending call; `changed` and `onError` are not called after. */
  stop(): Promise<void>;
}

/** Folders below the watched one followed at most (each is a watch of the system's). */
export const WATCH_DEPTH = 32;

/**
 * Watches a folder's tree (inotify on Linux, through chokidar) and calls `changed`, debounced,
 * when a file that may be a document was added, changed or removed, or a folder added or
 * removed. Hidden entries and folders the excludes leave out whole are not watched, symbolic
 * links are not followed, and an editor's save (a temporary file renamed over the original)
 * is one change. When the watch fails (the system's limit of watches reached, the folder
 * removed) it closes and calls `onError` once, naming the problem: the periodic sync then
 * finds the changes.
 */
export function watchFolder(
  root: string,
  changed: () => void,
  onError: (error: Error) => void,
  options: FolderWatchOptions = {},
): FolderWatch {
  const filter = options.filter ?? keyFilter();
  let stopped = false;
  let failed = false;
  let watcher: FSWatcher | null = null;
  let settle: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (settle = resolve));
  const debounced = debounce(() => {
    if (!stopped && !failed) changed();
  }, options.timing ?? WATCH_TIMING);
  const fail = (message: string) => {
    if (stopped || failed) return;
    failed = true;
    debounced.cancel();
    settle();
    void watcher?.close().catch(() => undefined);
    onError(new Error(message));
  };

  const started = (async () => {
    const problem = await folderProblem(root);
    if (problem !== null) return fail(`${problem}: it cannot be watched`);
    // The watch follows no link, so a root given through one is watched where it leads.
    const real = await realpath(root);
    if (stopped || failed) return;
    const keyOf = (path: string) => relative(real, path).split(sep).join('/');
    watcher = watch(real, {
      ignoreInitial: true,
      followSymlinks: false,
      depth: options.depth ?? WATCH_DEPTH,
      // A folder that cannot be read is left unwatched rather than failing the whole watch.
      ignorePermissionErrors: true,
      ignored: (path) =>
        path !== real && (basename(path).startsWith('.') || filter.leavesOut(keyOf(path))),
    });
    watcher.on('all', (event, path) => {
      const key = keyOf(path);
      if (event === 'unlinkDir' && key === '') {
        return fail(`the folder ${root} was removed or moved away: it is no longer watched`);
      }
      const isFile = event === 'add' || event === 'change' || event === 'unlink';
      // An editor's backup or temporary file (`notes.md~`) is not a type that is imported.
      if (isFile && (!filter.wants(key) || refusalOf(key, 0, Infinity) !== null)) return;
      debounced.trigger();
    });
    watcher.on('error', (error) => fail(watchErrorMessage(root, error as NodeJS.ErrnoException)));
    watcher.once('ready', settle);
  })().catch((error: Error) => fail(`the folder ${root} cannot be watched (${error.message})`));

  return {
    ready,
    async stop() {
      stopped = true;
      debounced.cancel();
      settle();
      await started;
      await watcher?.close();
    },
  };
}

/** What a watcher's error means, for the source's status. */
export function watchErrorMessage(root: string, error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOSPC':
      return `the folder ${root} cannot be watched: the system's limit of watched folders is reached (fs.inotify.max_user_watches)`;
    case 'EMFILE':
    case 'ENFILE':
      return `the folder ${root} cannot be watched: too many files are open (the limit of open files is reached)`;
    default:
      return `watching the folder ${root} failed (${error.code ?? error.message})`;
  }
}
