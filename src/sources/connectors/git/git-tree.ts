import { refusalOf, UNUSABLE_IN_IDS } from '../../../conversion/file-document';

/**
 * A commit's tree as a source sees it: `git ls-tree -r -z --long` parsed into the blobs that
 * become documents and the entries left out (and why), the way `agent-data import` treats a
 * folder; and the renames between two trees.
 */

/** One entry of `git ls-tree -r -z --long`: a blob, a symbolic link or a submodule. */
export interface TreeEntry {
  readonly mode: string;
  readonly type: string;
  readonly hash: string;
  /** In bytes; `null` for a submodule (a commit of another repository). */
  readonly size: number | null;
  /** The path in the repository; `null` when its bytes are not UTF-8. */
  readonly path: string | null;
  /** The path as shown in a message (the bytes decoded loosely). */
  readonly shown: string;
}

/** A blob to make a document of. */
export interface ListedBlob {
  /** Its path below the source's folder (`guides/setup.md`). */
  readonly key: string;
  /** Its path in the repository (`docs/guides/setup.md`). */
  readonly path: string;
  readonly hash: string;
  readonly size: number;
}

export interface Listing {
  readonly blobs: ListedBlob[];
  readonly skipped: Array<{ key: string; reason: string }>;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses `git ls-tree -r -z --long`: `<mode> <type> <hash> <size>\t<path>\0` records. */
export function parseTree(output: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let start = 0;
  while (start < output.length) {
    let end = output.indexOf(0, start);
    if (end === -1) end = output.length;
    const record = output.subarray(start, end);
    start = end + 1;
    const tab = record.indexOf(9);
    const header = /^(\d{6}) (\w+) ([0-9a-f]+) +(\d+|-)$/.exec(
      record.subarray(0, tab).toString('latin1'),
    );
    if (tab === -1 || header === null) {
      throw new Error(
        `git ls-tree wrote an entry it should not: ${JSON.stringify(record.toString('utf8').slice(0, 200))}`,
      );
    }
    const name = record.subarray(tab + 1);
    let path: string | null;
    try {
      path = strictUtf8.decode(name);
    } catch {
      path = null;
    }
    entries.push({
      mode: header[1],
      type: header[2],
      hash: header[3],
      size: header[4] === '-' ? null : Number(header[4]),
      path,
      shown: path ?? name.toString('utf8'),
    });
  }
  return entries;
}

export interface ListingRules {
  /** The source's folder in the repository, without slashes around it; `''` for the root. */
  readonly folder: string;
  /** Whether a key is wanted (the declaration's include and exclude globs). */
  readonly wanted: (key: string) => boolean;
  /** The body limit of a document (a text file over it is not read). */
  readonly maxBodyBytes: number;
}

/**
 * The tree's blobs under the folder that become documents, keyed by their path below it;
 * unwanted keys left out silently; hidden files and folders (reported once, by the hidden
 * folder), names no document id can hold, symbolic links and submodules (never followed),
 * other types and files too large (never read) skipped with the reason.
 */
export function listingOf(entries: readonly TreeEntry[], rules: ListingRules): Listing {
  const prefix = rules.folder === '' ? '' : `${rules.folder}/`;
  const blobs: ListedBlob[] = [];
  const skipped: Array<{ key: string; reason: string }> = [];
  const hidden = new Set<string>();
  for (const entry of entries) {
    if (!entry.shown.startsWith(prefix)) continue;
    if (entry.path === null) {
      const key = JSON.stringify(entry.shown.slice(prefix.length));
      skipped.push({ key, reason: 'its name is not UTF-8' });
      continue;
    }
    const key = entry.path.slice(prefix.length);
    if (!rules.wanted(key)) continue;
    const segments = key.split('/');
    const hiddenAt = segments.findIndex((segment) => segment.startsWith('.'));
    if (hiddenAt !== -1) {
      const hiddenKey = segments.slice(0, hiddenAt + 1).join('/');
      if (!hidden.has(hiddenKey)) skipped.push({ key: hiddenKey, reason: 'hidden' });
      hidden.add(hiddenKey);
    } else if (UNUSABLE_IN_IDS.test(key)) {
      skipped.push({
        key: JSON.stringify(key),
        reason: 'its name holds a control character or a backslash, which no id may',
      });
    } else if (entry.mode === '160000') {
      skipped.push({ key, reason: 'a submodule (not followed)' });
    } else if (entry.mode === '120000') {
      skipped.push({ key, reason: 'a symbolic link (not followed)' });
    } else if (entry.type !== 'blob' || entry.size === null) {
      skipped.push({ key, reason: 'not a regular file' });
    } else {
      const refusal = refusalOf(key, entry.size, rules.maxBodyBytes);
      if (refusal !== null) {
        skipped.push({ key, reason: refusal });
      } else {
        blobs.push({ key, path: entry.path, hash: entry.hash, size: entry.size });
      }
    }
  }
  return { blobs, skipped };
}

/**
 * The renames `git diff-tree -r -z -M --name-status` reports (`R<score>\0<from>\0<to>\0`),
 * as repository paths; other changes are passed over.
 */
export function renamesOf(output: Buffer): Array<{ from: string; to: string }> {
  const fields = output.toString('utf8').split('\0');
  const renames: Array<{ from: string; to: string }> = [];
  let index = 0;
  while (index < fields.length && fields[index] !== '') {
    const status = fields[index];
    if (status.startsWith('R') || status.startsWith('C')) {
      if (status.startsWith('R')) renames.push({ from: fields[index + 1], to: fields[index + 2] });
      index += 3;
    } else {
      index += 2;
    }
  }
  return renames;
}

/**
 * Renames told by equal content when the previous tree is not at hand: a known key that is
 * gone whose blob is now under exactly one new key (and that key's blob under no other gone
 * key). Ambiguous copies are left to the reconciliation (a creation and a deletion).
 */
export function movesByHash(
  known: ReadonlyMap<string, { readonly version: string }>,
  present: ReadonlySet<string>,
  blobs: readonly ListedBlob[],
): Array<{ from: string; to: string }> {
  const gone = new Map<string, string[]>();
  for (const [key, item] of known) {
    if (!present.has(key)) gone.set(item.version, [...(gone.get(item.version) ?? []), key]);
  }
  const arrived = new Map<string, string[]>();
  for (const blob of blobs) {
    if (!known.has(blob.key) && gone.has(blob.hash)) {
      arrived.set(blob.hash, [...(arrived.get(blob.hash) ?? []), blob.key]);
    }
  }
  const moves: Array<{ from: string; to: string }> = [];
  for (const [hash, keys] of arrived) {
    const from = gone.get(hash)!;
    if (keys.length === 1 && from.length === 1) moves.push({ from: from[0], to: keys[0] });
  }
  return moves;
}
