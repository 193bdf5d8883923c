import picomatch from 'picomatch';

/** A source's `include` and `exclude` globs, matched against an item's key. */
export interface KeyFilter {
  /** Whether an item of this key belongs to the source. */
  wants(key: string): boolean;
  /**
   * Whether nothing under this folder (a key prefix without its `/`) can belong to the
   * source, so that it need not be listed: an `exclude` glob `X/**` whose `X` matches it.
   */
  leavesOut(folder: string): boolean;
}

/**
 * The filter of `include` (none or an empty list: every key) and `exclude` globs, picomatch
 * syntax against the whole key (`guides/setup.md`): `**\/*.md`, `drafts/**`. `dot: false`,
 * so `*` and `**` never match a name starting with a dot (such files are left out anyway).
 */
export function keyFilter(include?: readonly string[], exclude?: readonly string[]): KeyFilter {
  const options = { dot: false };
  const included =
    include !== undefined && include.length > 0 ? picomatch([...include], options) : () => true;
  const excluded =
    exclude !== undefined && exclude.length > 0 ? picomatch([...exclude], options) : () => false;
  // `X/**` refuses every key under a folder matching `X`, and under any folder it matches.
  const wholeFolders = (exclude ?? [])
    .filter((glob) => glob.endsWith('/**') && glob.length > 3)
    .flatMap((glob) => [glob.slice(0, -3), glob]);
  const folderExcluded = wholeFolders.length > 0 ? picomatch(wholeFolders, options) : () => false;
  return {
    wants: (key) => included(key) && !excluded(key),
    leavesOut: (folder) => folderExcluded(folder),
  };
}
