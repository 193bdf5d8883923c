import picomatch from 'picomatch';
import { documentOfFile } from '../../../conversion/file-document';
import type { GitSourceDeclaration } from '../../source-declaration';
import type { Connector, Enumeration, EnumerationContext, SourceItem } from '../connector';
import { BlobReader } from './git-blob-reader';
import { fetchHead, hasCommit, hasFolder, openCache } from './git-cache';
import { Git } from './git-process';
import { COMMIT_HASH, isRefName, remoteHead, shortName } from './git-refs';
import { remoteAccess } from './git-remote';
import { listingOf, movesByHash, parseTree, renamesOf, type ListedBlob } from './git-tree';

export interface GitConnectorOptions {
  /** The source's own cache repository (`${DATA_DIR}/sources/git/<source id>`), made on first use. */
  readonly cacheDir: string;
  /**
   * The server's environment, as the configuration read it (nothing else reads `process.env`):
   * where the declaration's `{ env }` references are looked up, and git's `PATH`, `HOME` and
   * proxy variables come from.
   */
  readonly env: NodeJS.ProcessEnv;
  /** The longest `ls-remote` or `fetch` may take (default 10 minutes). */
  readonly networkTimeoutMs?: number;
  /** The longest any other git command, or the read of one blob, may take (default 2 minutes). */
  readonly localTimeoutMs?: number;
  /** The most documents a source may hold (default 100 000): more fails the run, naming it. */
  readonly maxItems?: number;
  /** Told of every git process started (its arguments), for a log or a test. */
  readonly onCommand?: (args: readonly string[]) => void;
}

/** The largest `ls-tree` or `diff-tree` output read (100 000 entries take about 12 MB). */
const MAX_LISTING_BYTES = 64 * 1024 * 1024;

/**
 * A git repository's folder as a source: a branch or tag followed commit by commit. A run
 * first asks the remote where the ref stands (one `ls-remote`, nothing fetched, nothing read):
 * unmoved since the last complete run, it is `unchanged`. Otherwise it fetches that commit into
 * the source's cache and lists its tree: each blob an item whose version is its hash, so that a
 * file whose content did not change is neither read nor written; renames come from comparing
 * the tree with the previous commit's (or, when the cache no longer has it, by equal blobs).
 */
export class GitConnector implements Connector {
  private readonly folder: string;
  private readonly wanted: (key: string) => boolean;

  constructor(
    private readonly source: GitSourceDeclaration,
    private readonly options: GitConnectorOptions,
  ) {
    this.folder = (source.path ?? '').replace(/^\/+|\/+$/g, '');
    const include = source.include?.length ? picomatch(source.include, { dot: true }) : null;
    const exclude = source.exclude?.length ? picomatch(source.exclude, { dot: true }) : null;
    this.wanted = (key) =>
      (include === null || include(key)) && (exclude === null || !exclude(key));
  }

  async enumerate(context: EnumerationContext): Promise<Enumeration> {
    context.signal.throwIfAborted();
    const { source } = this;
    if (source.ref !== undefined && !isRefName(source.ref)) {
      throw new Error(`the ref ${JSON.stringify(source.ref)} is not a branch or tag name`);
    }
    if (this.folder.split('/').some((segment) => segment === '.' || segment === '..')) {
      throw new Error(`the path ${JSON.stringify(source.path)} is not a folder of the repository`);
    }
    const access = await remoteAccess(source, this.options.env);
    const git = new Git({
      baseEnv: this.options.env,
      env: access.env,
      config: [
        ...access.config,
        // A fetch may start `git gc --auto`: in the foreground, so it is bounded and killed with it.
        ['gc.autoDetach', 'false'],
        ['maintenance.auto', 'false'],
        ['fetch.recurseSubmodules', 'false'],
      ],
      secrets: access.secrets,
      signal: context.signal,
      onCommand: this.options.onCommand,
    });
    const network = this.options.networkTimeoutMs ?? 600_000;
    const local = this.options.localTimeoutMs ?? 120_000;
    try {
      const head = await remoteHead(git, source.url, source.ref, network);
      const name = shortName(source.ref ?? head.ref);
      if (context.cursor === head.commit) {
        return {
          complete: true,
          unchanged: true,
          cursor: head.commit,
          version: `${name}@${head.commit.slice(0, 7)}`,
          items: [],
          failed: [],
          skipped: [],
        };
      }
      const dir = this.options.cacheDir;
      await openCache(git, dir, network + 60_000, local);
      const commit = await fetchHead(git, dir, source.url, head.ref, { network, local });
      const version = `${name}@${commit.slice(0, 7)}`;
      const { stdout } = await git.run(
        [
          'ls-tree',
          '-r',
          '-z',
          '--long',
          commit,
          ...(this.folder === '' ? [] : ['--', this.folder]),
        ],
        { cwd: dir, timeoutMs: local, maxOutputBytes: MAX_LISTING_BYTES },
      );
      const listing = listingOf(parseTree(stdout), {
        folder: this.folder,
        wanted: this.wanted,
        maxBodyBytes: context.maxBodyBytes,
      });
      if (
        this.folder !== '' &&
        listing.blobs.length + listing.skipped.length === 0 &&
        !(await hasFolder(git, dir, commit, this.folder, local))
      ) {
        throw new Error(
          `the folder ${this.folder} does not exist in ${git.redact(source.url)} at ${version}`,
        );
      }
      const maxItems = this.options.maxItems ?? 100_000;
      if (listing.blobs.length > maxItems) {
        throw new Error(
          `${listing.blobs.length} files to sync at ${version}, over the ${maxItems} a source may hold: narrow it with path, include or exclude`,
        );
      }
      const moves = await this.movesSince(
        git,
        context,
        commit,
        listing.blobs,
        listing.skipped,
        local,
      );
      const reader = new BlobReader(git, dir, local);
      const url = git.redact(source.url);
      return {
        complete: true,
        cursor: commit,
        version,
        items: listing.blobs.map((blob) =>
          this.itemOf(blob, `${url}@${commit}:${blob.path}`, reader),
        ),
        moves,
        failed: [],
        skipped: listing.skipped,
      };
    } finally {
      await access.dispose();
    }
  }

  private itemOf(blob: ListedBlob, uri: string, reader: BlobReader): SourceItem {
    return {
      key: blob.key,
      version: blob.hash,
      uri,
      load: async () => documentOfFile(blob.key, await reader.read(blob.hash, blob.size)),
    };
  }

  /**
   * Known keys renamed since the last run's commit: `git diff-tree -M` between its tree and the
   * new one when the cache still has it (whether or not the history was rewritten since: the
   * documents were written from that tree), else by equal blobs. Only from a known key to a
   * listed one.
   */
  private async movesSince(
    git: Git,
    context: EnumerationContext,
    commit: string,
    blobs: readonly ListedBlob[],
    skipped: ReadonlyArray<{ key: string }>,
    timeoutMs: number,
  ): Promise<Array<{ from: string; to: string }>> {
    if (context.known.size === 0) return [];
    const dir = this.options.cacheDir;
    const present = new Set([
      ...blobs.map((blob) => blob.key),
      ...skipped.map((entry) => entry.key),
    ]);
    const old = context.cursor;
    if (old === null || !COMMIT_HASH.test(old) || !(await hasCommit(git, dir, old, timeoutMs))) {
      return movesByHash(context.known, present, blobs);
    }
    const { stdout } = await git.run(
      [
        'diff-tree',
        '-r',
        '-z',
        '-M',
        '--name-status',
        old,
        commit,
        ...(this.folder === '' ? [] : ['--', this.folder]),
      ],
      { cwd: dir, timeoutMs, maxOutputBytes: MAX_LISTING_BYTES },
    );
    const prefix = this.folder === '' ? '' : `${this.folder}/`;
    const listed = new Set(blobs.map((blob) => blob.key));
    return renamesOf(stdout)
      .filter((rename) => rename.from.startsWith(prefix) && rename.to.startsWith(prefix))
      .map((rename) => ({
        from: rename.from.slice(prefix.length),
        to: rename.to.slice(prefix.length),
      }))
      .filter(
        (move) =>
          context.known.has(move.from) &&
          !present.has(move.from) &&
          listed.has(move.to) &&
          !context.known.has(move.to),
      );
  }
}
