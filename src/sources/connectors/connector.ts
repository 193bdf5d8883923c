import type { SourceDocument } from '../../conversion/file-document';

/**
 * What a source's connector (folder, git, web) tells the reconciliation of one run. The
 * reconciliation (src/sources/reconcile) compares it with what the source wrote before and
 * writes only the difference: a connector never writes documents itself.
 */

/** What a run remembers of an item between runs, by its key. */
export interface KnownItem {
  /** The version the item had when it was last written (see {@link SourceItem.version}). */
  readonly version: string;
  /** Where it came from (see {@link SourceItem.uri}). */
  readonly uri: string;
  /** A connector's own notes of the item (a web page's ETag and Last-Modified). */
  readonly validators?: Readonly<Record<string, string>>;
}

/** What one run knows before it enumerates. */
export interface EnumerationContext {
  /** Every item the source wrote and still holds, by key. */
  readonly known: ReadonlyMap<string, KnownItem>;
  /** The cursor the last complete run ended on (a git commit), if any. */
  readonly cursor: string | null;
  /** Aborted when the run is cancelled or the server stops: stop soon, throw the reason. */
  readonly signal: AbortSignal;
  /** The body limit of a document, in bytes (MAX_BODY_BYTES). */
  readonly maxBodyBytes: number;
}

/**
 * An item the source holds now. Its key becomes the document id under the mount
 * (`mount/key`, in the composed form: the reconciliation's `documentId`): '/'-separated, no
 * leading slash, as `agent-data import` names files (`guides/setup.md`; a web page's path,
 * `.md` added where it has no extension of its own). The key itself is the name as found (the
 * connector reads the item by it).
 */
export interface SourceItem {
  readonly key: string;
  /**
   * Changes whenever the content may have: a git blob's hash, a file's size and modification
   * time, a page's ETag or Last-Modified (or its content's hash). An item whose version equals
   * the known one is not read and not written.
   */
  readonly version: string;
  /** Provenance: a file's path, `url@commit:path` in a repository, a page's final URL. */
  readonly uri: string;
  /** Notes to keep for the next run (a page's validators). */
  readonly validators?: Readonly<Record<string, string>>;
  /**
   * The document, when the connector had to read it to enumerate (a web page), or how to
   * read it (a file, a blob): called only when the version changed. Throws naming the problem
   * (the item then counts as failed, and as seen: never deleted for it).
   */
  readonly document?: SourceDocument;
  readonly load?: () => Promise<SourceDocument>;
}

/** What one enumeration found. */
export interface Enumeration {
  /**
   * Whether the listing is complete: every item the source holds is in `items`, `failed` or
   * `skipped`. Only a complete enumeration deletes the documents of items it did not see.
   */
  readonly complete: boolean;
  /**
   * Nothing changed since `context.cursor` (a git head that has not moved): `items` is empty
   * and nothing is deleted.
   */
  readonly unchanged?: boolean;
  /** The cursor to keep once the run succeeds (a git commit). */
  readonly cursor?: string | null;
  /** Where the source stood, for the run's record (`main@1a2b3c4`, the number of pages seen). */
  readonly version?: string;
  readonly items: readonly SourceItem[];
  /** Items renamed since the last run: `from` a known key `to` a key of `items`. */
  readonly moves?: ReadonlyArray<{ readonly from: string; readonly to: string }>;
  /** Items that exist but could not be read now (counted as seen: never deleted for it). */
  readonly failed: ReadonlyArray<{ readonly key: string; readonly reason: string }>;
  /** Entries that are not documents (another type, too large, a symbolic link), and why. */
  readonly skipped: ReadonlyArray<{ readonly key: string; readonly reason: string }>;
}

/** A kind of source. One instance per declared source, built from its declaration. */
export interface Connector {
  /** Lists what the source holds now. Throws (naming the problem) when it cannot at all. */
  enumerate(context: EnumerationContext): Promise<Enumeration>;
  /**
   * For sources that can tell of changes at once (a watched folder): calls `changed` whenever
   * something may have changed (debounced by the caller); returns a stop function.
   */
  watch?(changed: () => void, onError: (error: Error) => void): () => Promise<void>;
}
