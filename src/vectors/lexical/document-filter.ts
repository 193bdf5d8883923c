/**
 * Which documents a search may answer: those under a folder (their id starts with it; it
 * ends in `/`) and carrying every one of some tags.
 */
export interface DocumentFilter {
  readonly folder?: string;
  readonly tags?: readonly string[];
  /** Folders (each ending in `/`) a document must be under one of: what the caller may read. */
  readonly folders?: readonly string[];
}

/** A filter as text, the same for the same filter. */
export function filterKey(filter: DocumentFilter): string {
  const list = (items: readonly string[] | undefined) =>
    items === undefined ? '-' : `[${items.join('\u0000')}]`;
  return `${filter.folder ?? '-'}\u0001${list(filter.tags)}\u0001${list(filter.folders)}`;
}

/** A filter as a test of one document's id and tags. */
export function admits(
  filter: DocumentFilter,
): (documentId: string, tags: readonly string[]) => boolean {
  const { folder, tags, folders } = filter;
  return (documentId, held) =>
    (folder === undefined || documentId.startsWith(folder)) &&
    (tags === undefined || tags.every((tag) => held.includes(tag))) &&
    (folders === undefined || folders.some((under) => documentId.startsWith(under)));
}
