import { filterKey, type DocumentFilter } from './document-filter';

const NONE: ReadonlySet<string> = new Set();

/** Readable-folder masks kept (the last principals' folders). */
const MASKS_KEPT = 8;

/** The ids a filter admits, when few, and their slots once a search has looked them up. */
export interface Admitted {
  ids: readonly string[] | undefined;
  slots?: Int32Array;
}

/**
 * The lexical index's folder and tag sets (every folder an id's path names, every tag), and
 * what searches made of them: the documents a filter admits, the slots outside a principal's
 * readable folders. Those answers are kept for the next searches with the same filter until
 * a document is set or removed (`version`, the index's count of changes), since one
 * principal's folders are asked for again and again.
 */
export class DocumentGroups {
  private readonly folders = new Map<string, Set<string>>();
  private readonly tagged = new Map<string, Set<string>>();
  private readonly masks = new Map<string, { version: number; mask: Uint8Array }>();
  private readonly admittedKept = new Map<string, Admitted & { version: number }>();

  /** 2 for every slot outside `folders`, 0 for the others (kept: see above). */
  outside(
    folders: readonly string[],
    version: number,
    slotCount: number,
    slotOf: (documentId: string) => number,
  ): Uint8Array {
    const key = folders.join('\n');
    const kept = this.masks.get(key);
    if (kept !== undefined && kept.version === version) return kept.mask;
    const mask = new Uint8Array(slotCount).fill(2);
    for (const folder of folders) {
      for (const id of this.folders.get(folder) ?? NONE) mask[slotOf(id)] = 0;
    }
    if (this.masks.size >= MASKS_KEPT) this.masks.delete(this.masks.keys().next().value!);
    this.masks.set(key, { version, mask });
    return mask;
  }

  /** Adds a document to (or takes it from) the sets of its folders and its tags. */
  group(documentId: string, tags: readonly string[], add: boolean): void {
    const sets: Array<[Map<string, Set<string>>, string]> = tags.map((tag) => [this.tagged, tag]);
    for (let at = documentId.indexOf('/'); at >= 0; at = documentId.indexOf('/', at + 1)) {
      sets.push([this.folders, documentId.slice(0, at + 1)]);
    }
    for (const [groups, key] of sets) {
      let members = groups.get(key);
      if (add) {
        if (members === undefined) groups.set(key, (members = new Set()));
        members.add(documentId);
      } else if (members !== undefined) {
        members.delete(documentId);
        if (members.size === 0) groups.delete(key);
      }
    }
  }

  /** What the index's state now gives for this filter: a policy's folders come back often. */
  remembered(filter: DocumentFilter, share: number, version: number, liveCount: number): Admitted {
    const key = `${share}\u0001${filterKey(filter)}`;
    const kept = this.admittedKept.get(key);
    if (kept !== undefined && kept.version === version) return kept;
    const entry: Admitted & { version: number } = {
      version,
      ids: this.admittedNow(filter, share, liveCount),
    };
    if (this.admittedKept.size >= MASKS_KEPT) {
      this.admittedKept.delete(this.admittedKept.keys().next().value!);
    }
    this.admittedKept.set(key, entry);
    return entry;
  }

  private admittedNow(
    filter: DocumentFilter,
    share: number,
    liveCount: number,
  ): string[] | undefined {
    // Each condition as the documents meeting it: one set, or the union of disjoint sets.
    const conditions: Array<ReadonlyArray<ReadonlySet<string>>> = [];
    if (filter.folder !== undefined) conditions.push([this.folders.get(filter.folder) ?? NONE]);
    for (const tag of filter.tags ?? []) conditions.push([this.tagged.get(tag) ?? NONE]);
    if (filter.folders !== undefined) {
      conditions.push(filter.folders.map((folder) => this.folders.get(folder) ?? NONE));
    }
    if (conditions.length === 0) return undefined;
    const size = (sets: ReadonlyArray<ReadonlySet<string>>) =>
      sets.reduce((sum, set) => sum + set.size, 0);
    conditions.sort((a, b) => size(a) - size(b));
    const [fewest, ...others] = conditions;
    if (size(fewest) > liveCount * share) return undefined;
    const found = new Set<string>();
    for (const set of fewest) {
      for (const id of set) {
        if (others.every((sets) => sets.some((other) => other.has(id)))) found.add(id);
      }
    }
    return [...found];
  }
}
