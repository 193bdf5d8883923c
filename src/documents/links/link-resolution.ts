import { documentKeys, endsWithPath, nameOf, twinOf, type LinkTarget } from './link-targets';

/**
 * The documents a set of links may resolve to, as one lookup found them (alive, and readable
 * by the caller: a document outside the grants is absent here, so links resolve as if it
 * did not exist): the ids asked for that exist, and the documents of each name and title.
 */
export interface Candidates {
  readonly ids: ReadonlySet<string>;
  /** By {@link nameOf}: the last segment of the id, folded, without `.md`. */
  readonly byName: ReadonlyMap<string, readonly string[]>;
  /** By titleKey. */
  readonly byTitle: ReadonlyMap<string, readonly string[]>;
}

/** What to look up to resolve `targets`: ids (with their twins), names and titles. */
export interface Lookup {
  readonly ids: string[];
  readonly names: string[];
  readonly titles: string[];
}

export function lookupOf(targets: Iterable<LinkTarget>): Lookup {
  const ids = new Set<string>();
  const names = new Set<string>();
  const titles = new Set<string>();
  for (const target of targets) {
    if (target.rule === 'id') {
      ids.add(target.id);
      ids.add(twinOf(target.id));
    } else {
      names.add(nameOf(target.suffix));
      if (target.title !== null) titles.add(target.title);
    }
  }
  return { ids: [...ids], names: [...names], titles: [...titles] };
}

/**
 * The document `target`, written in `sourceId`, resolves to among `candidates`, or `null`
 * (a broken link). An id: that id, else its twin with or without `.md`. A path: the documents
 * whose id ends with it, the {@link nearest} one; none, for a wikilink: the documents of its
 * title, the nearest one.
 */
export function resolve(
  target: LinkTarget,
  sourceId: string,
  candidates: Candidates,
): string | null {
  if (target.rule === 'id') {
    if (candidates.ids.has(target.id)) return target.id;
    const twin = twinOf(target.id);
    return candidates.ids.has(twin) ? twin : null;
  }
  const named = candidates.byName.get(nameOf(target.suffix)) ?? [];
  const matching = named.filter((id) => endsWithPath(id, target.suffix));
  if (matching.length > 0) return nearest(sourceId, matching);
  if (target.title === null) return null;
  const titled = candidates.byTitle.get(target.title) ?? [];
  return titled.length > 0 ? nearest(sourceId, titled) : null;
}

/**
 * Of several documents a link may mean, the one nearest the linking document: sharing the most
 * leading folders with it (a path relative to its folder first, then to each folder above it,
 * so a vault imported under a prefix keeps its vault-absolute links), then the shortest id,
 * then the first in byte order.
 */
export function nearest(sourceId: string, ids: readonly string[]): string {
  if (ids.length === 1) return ids[0];
  const folders = sourceId.split('/').slice(0, -1);
  let best = ids[0];
  let bestShared = shared(folders, best);
  for (const id of ids.slice(1)) {
    const n = shared(folders, id);
    if (
      n > bestShared ||
      (n === bestShared &&
        (id.length < best.length || (id.length === best.length && compareBytes(id, best) < 0)))
    ) {
      best = id;
      bestShared = n;
    }
  }
  return best;
}

/** Leading folders `id` shares with `folders`. */
function shared(folders: readonly string[], id: string): number {
  const other = id.split('/');
  let n = 0;
  while (n < folders.length && n < other.length - 1 && folders[n] === other[n]) n++;
  return n;
}

/** Byte order of UTF-8 (code point order), as PostgreSQL's "C" collation sorts ids. */
export function compareBytes(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * How the links found by each of a document's keys resolve to it: those of an `always` key
 * resolve to it from any document; those of a `nearest` key only from documents nearer to it
 * than to its `rivals` (documents the same path or title may mean). A key in neither never
 * does (its twin exists, or a path takes a title's links).
 */
export interface BacklinkKeys {
  readonly always: string[];
  readonly nearest: Array<{ readonly key: string; readonly rivals: readonly string[] }>;
}

/** What to look up to classify the keys of `documentId`, titled `title`. */
export function backlinkLookup(documentId: string, title: string): Lookup {
  const titlePath = documentKeys(documentId, title).title;
  return {
    ids: [twinOf(documentId)],
    names: [...new Set([nameOf(documentId), nameOf(titlePath)])],
    titles: [titlePath],
  };
}

/** The keys of `documentId` sorted by how their links resolve ({@link BacklinkKeys}). */
export function backlinkKeys(
  documentId: string,
  title: string,
  candidates: Candidates,
): BacklinkKeys {
  const keys = documentKeys(documentId, title);
  const always = [keys.id];
  const bySource: BacklinkKeys['nearest'] = [];
  const sort = (found: string[], rivals: readonly string[]) => {
    if (rivals.length <= 1) always.push(...found);
    else bySource.push(...found.map((key) => ({ key, rivals })));
  };
  if (!candidates.ids.has(twinOf(documentId))) always.push(keys.twin);
  const named = candidates.byName.get(nameOf(documentId)) ?? [];
  for (const suffix of keys.suffixes) {
    sort(
      [`~${suffix}`, `%${suffix}`],
      named.filter((id) => endsWithPath(id, suffix)),
    );
  }
  // A wikilink tries titles only when no document has its path.
  const titlePath = keys.title.replace(/\.md$/, '');
  const takenByPath = (candidates.byName.get(nameOf(keys.title)) ?? []).some((id) =>
    endsWithPath(id, titlePath),
  );
  if (!takenByPath)
    sort([`@${keys.title}`, `%${keys.title}`], candidates.byTitle.get(keys.title) ?? []);
  return { always, nearest: bySource };
}
