import type { ChangeOperation } from '../../documents/document-changes.listener';
import { parseResourceUri } from '../resources/resource-uri';

/** Most resource URIs one subscription may name. */
export const MAX_FILTER_URIS = 1000;

/** What a client asks for on `subscriptions/listen` (the revision's `SubscriptionFilter`). */
export interface RequestedFilter {
  readonly toolsListChanged?: boolean;
  readonly promptsListChanged?: boolean;
  readonly resourcesListChanged?: boolean;
  readonly resourceSubscriptions?: readonly string[];
}

/** Operations that add a document to a listing or take one away. */
const LIST_CHANGES: ReadonlySet<ChangeOperation> = new Set([
  'create',
  'delete',
  'restore',
  'purge',
  'move',
  'moved-away',
]);

/**
 * The part of a filter this server honours, and the test of a change against it.
 *
 * * `resourceSubscriptions`: `kb://<document_id>` names one document; a folder URI,
 *   `kb://<folder>/`, names every document under it, at any depth (folders are id prefixes
 *   ending in "/"). Any other URI is left out of the acknowledgement. Whether the document
 *   exists is not asked: one created later is reported too.
 * * `resourcesListChanged`: a document created, deleted, restored, purged or moved.
 * * `toolsListChanged`, `promptsListChanged`: never honoured (left out): neither list
 *   changes while the server runs.
 *
 * Access is not decided here: the caller asks, per change, whether the listener may read the
 * document at all.
 */
export class HonouredFilter {
  private readonly documents = new Set<string>();
  private readonly folders: string[] = [];
  /** The URIs honoured, as the client wrote them (echoed in the acknowledgement). */
  private readonly uris = new Map<string, string>();

  constructor(
    readonly listChanged: boolean,
    uris: readonly string[] = [],
  ) {
    for (const uri of uris) this.add(uri);
  }

  static of(requested: RequestedFilter): HonouredFilter {
    return new HonouredFilter(
      requested.resourcesListChanged === true,
      requested.resourceSubscriptions ?? [],
    );
  }

  /** How many URIs are honoured. */
  get size(): number {
    return this.uris.size;
  }

  /** Honours `uri` when it names a document or folder; says whether it does. */
  add(uri: string): boolean {
    let key: string;
    try {
      const target = parseResourceUri(uri);
      if (target.kind === 'document') {
        key = target.documentId;
        this.documents.add(key);
      } else {
        key = `${target.folder}/`;
        if (!this.folders.includes(key)) this.folders.push(key);
      }
    } catch {
      return false;
    }
    this.uris.set(uri, key);
    return true;
  }

  /** Stops honouring `uri` (as it was given to {@link add}). */
  remove(uri: string): void {
    const key = this.uris.get(uri);
    if (key === undefined) return;
    this.uris.delete(uri);
    if ([...this.uris.values()].includes(key)) return;
    this.documents.delete(key);
    const at = this.folders.indexOf(key);
    if (at >= 0) this.folders.splice(at, 1);
  }

  /** The honoured URIs that name one document (not a folder), as they were given. */
  documentUris(): string[] {
    return [...this.uris].filter(([, key]) => !key.endsWith('/')).map(([uri]) => uri);
  }

  /** Whether a change of `documentId` is a `notifications/resources/updated` for this filter. */
  names(documentId: string): boolean {
    return (
      this.documents.has(documentId) || this.folders.some((folder) => documentId.startsWith(folder))
    );
  }

  /** Whether `op` is a `notifications/resources/list_changed` for this filter. */
  changesList(op: ChangeOperation): boolean {
    return this.listChanged && LIST_CHANGES.has(op);
  }

  /** The acknowledged filter: only what is honoured, nothing the client did not ask for. */
  acknowledged(): RequestedFilter {
    return {
      ...(this.listChanged ? { resourcesListChanged: true } : {}),
      ...(this.uris.size > 0 ? { resourceSubscriptions: [...this.uris.keys()] } : {}),
    };
  }
}
