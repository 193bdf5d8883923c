import { escapeLike } from './document-id';

/** Folders granted: every document (`'*'`), or those under some folders (each ending in `/`). */
export type Folders = '*' | readonly string[];

/**
 * What one principal may read and write (access-policy.ts): every read and write of a
 * document asks it, and every query that lists, searches or completes documents carries its
 * readable folders as a condition, so that a document outside them is never read at all.
 * Folders are whole segments: `team-a/` covers `team-a/x.md`, never `team-ab/x.md`.
 * Writing implies reading.
 */
export class Access {
  /** No policy (or authentication off): everything, as before access control existed. */
  static readonly EVERYTHING = new Access('*', '*');
  static readonly NOTHING = new Access([], []);

  readonly read: Folders;
  readonly write: Folders;

  /** `onRefusal` is told of each read or write refused (access_denied_total counts them). */
  constructor(
    read: Folders,
    write: Folders,
    private readonly onRefusal?: () => void,
  ) {
    this.write = write === '*' ? '*' : minimal(write);
    this.read = read === '*' || write === '*' ? '*' : minimal([...read, ...write]);
  }

  /**
   * The access of a source's own run (src/sources/): everything, and the one writer that may
   * change the documents the source owns (DocumentSources).
   */
  static ofSource(sourceId: string): Access {
    const access = new Access('*', '*');
    access.source = sourceId;
    return access;
  }

  /** The source whose run this is, if any (see {@link ofSource}). */
  source: string | undefined;

  /** Notes that a read or write was refused. */
  refused(): void {
    this.onRefusal?.();
  }

  /** True when this access reads and writes everything (no condition to add anywhere). */
  get unlimited(): boolean {
    return this.read === '*' && this.write === '*';
  }

  mayRead(documentId: string): boolean {
    return covers(this.read, documentId);
  }

  mayWrite(documentId: string): boolean {
    return covers(this.write, documentId);
  }

  /**
   * The readable part of what starts with `prefix` (any text, not only a folder): `'all'`
   * when every id starting with it is readable, otherwise the readable folders that start
   * with it (none: nothing under it is readable).
   */
  readableUnder(prefix: string): 'all' | readonly string[] {
    if (this.read === '*') return 'all';
    if (this.read.some((folder) => prefix.startsWith(folder))) return 'all';
    return this.read.filter((folder) => folder.startsWith(prefix));
  }

  /**
   * The ids starting with `prefix` that this access may read, as prefixes each naming one
   * range of the id index, in byte order: `[prefix]` when all of them are readable, else the
   * readable folders under it (none: nothing is).
   */
  readablePrefixes(prefix: string): string[] {
    const readable = this.readableUnder(prefix);
    if (readable === 'all') return [prefix];
    return [...readable].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  }

  /**
   * The readable folders as `LIKE` patterns (`team-a/%`, wildcards escaped), for
   * `document_id LIKE ANY($n::text[])`; `undefined` when everything is readable.
   */
  readablePatterns(): string[] | undefined {
    return this.read === '*' ? undefined : patternsOf(this.read);
  }

  /**
   * The condition on the ids starting with `prefix` (readableIds' parameter): `null` when
   * every one of them is readable, else the patterns of the readable folders under it;
   * `undefined` when none is readable (nothing to ask the database).
   */
  readableConditionUnder(prefix: string): Readable | undefined {
    const readable = this.readableUnder(prefix);
    if (readable === 'all') return null;
    return readable.length === 0 ? undefined : patternsOf(readable);
  }

  /**
   * What a read of the ids starting with `prefix` reads: the prefix itself when all of it is
   * readable; else the readable folders under it, as a narrower prefix (the longest they
   * share, so that an index range stays narrow) and their patterns; `undefined` when nothing
   * under it is readable.
   */
  scopeUnder(prefix: string): { prefix: string; readable: Readable } | undefined {
    const readable = this.readableUnder(prefix);
    if (readable === 'all') return { prefix, readable: null };
    if (readable.length === 0) return undefined;
    if (readable.length === 1) return { prefix: readable[0], readable: null };
    // The longest prefix they share, whole code points (never half a surrogate pair).
    let shared = [...readable[0]];
    for (const folder of readable) {
      while (!folder.startsWith(shared.join(''))) shared = shared.slice(0, -1);
    }
    return { prefix: shared.join(''), readable: patternsOf(readable) };
  }
}

/** Folders as `LIKE` patterns of the ids under them, wildcards escaped. */
function patternsOf(folders: readonly string[]): string[] {
  return folders.map((folder) => `${escapeLike(folder)}%`);
}

function covers(folders: Folders, documentId: string): boolean {
  return folders === '*' || folders.some((folder) => documentId.startsWith(folder));
}

/** The folders without duplicates and without one inside another, sorted. */
function minimal(folders: readonly string[]): string[] {
  // In sorted order the folders inside a folder come right after it.
  const kept: string[] = [];
  for (const folder of [...new Set(folders)].sort()) {
    if (kept.length === 0 || !folder.startsWith(kept[kept.length - 1])) kept.push(folder);
  }
  return kept;
}

/**
 * The `LIKE` patterns of the folders a caller may read (Access.readablePatterns), or `null`
 * when it reads everything.
 */
export type Readable = readonly string[] | null;

/**
 * The condition keeping the ids a caller may read, its patterns being parameter `n`: one
 * statement (and one prepared plan) with and without an access policy.
 */
export function readableIds(n: number): string {
  return `($${n}::text[] IS NULL OR document_id LIKE ANY($${n}::text[]))`;
}
