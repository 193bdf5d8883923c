/** Which documents a search may answer, as the stores are asked. */
export interface Scope {
  /** A normalised folder ending in `/` (see folderOf). */
  readonly folder?: string;
  /** Every one of these tags. */
  readonly tags?: readonly string[];
  /** Under one of these folders (each ending in `/`): what the caller may read. */
  readonly folders?: readonly string[];
}

type Condition =
  { key: string; match: { value: string } } | { key: string; match: { any: string[] } };

/**
 * The scope as a Qdrant payload filter, applied inside Qdrant while it ranks (so `limit`
 * results come back however few documents the scope admits): the folder and the readable
 * folders on every point's `ancestors` (its id's folders, and the id itself as a folder), each
 * tag on `tags`. `undefined` when the scope admits everything.
 */
export function scopeFilter(scope: Scope): { must: Condition[] } | undefined {
  const must: Condition[] = [
    ...(scope.folder !== undefined ? [{ key: 'ancestors', match: { value: scope.folder } }] : []),
    ...(scope.tags ?? []).map((tag) => ({ key: 'tags', match: { value: tag } })),
    ...(scope.folders !== undefined
      ? [{ key: 'ancestors', match: { any: [...scope.folders] } }]
      : []),
  ];
  return must.length > 0 ? { must } : undefined;
}
