import type { EntityManager } from 'typeorm';
import type { Bm25Averages } from './bm25';
import type { LexicalRecord } from './lexical-record';

// What the lexical side is given and gives back, shared by the store, its repository and the
// index in Qdrant (stores/qdrant/).

/** A document the vector worker has chunked: its passages and its lexical record. */
export interface LexicalWrite {
  readonly documentId: string;
  readonly revision: number;
  readonly tags: readonly string[];
  readonly passages: ReadonlyArray<{ index: number; heading: string; content: string }>;
  readonly record: LexicalRecord;
  /** How many times its anchor field was written (see IndexedLexicalDocument). */
  readonly anchorStamp?: number;
}

export interface LexicalSearchOptions {
  readonly limit: number;
  /** A normalised folder ending in `/` (see folderOf). */
  readonly folder?: string;
  readonly tags?: readonly string[];
  /** Folders (each ending in `/`) a document must be under one of: what the caller may read. */
  readonly folders?: readonly string[];
}

/** A document found by its words, with its best passage. */
export interface LexicalHit {
  readonly documentId: string;
  readonly title: string;
  readonly heading: string;
  readonly content: string;
  readonly score: number;
  /** The document's current revision waits to be embedded (the vector side lacks it). */
  readonly catchingUp: boolean;
}

/**
 * Where the lexical side is indexed when it is not in this process: told, inside the
 * transaction that writes the records, what was written and removed, and the knowledge base's
 * mean lengths then (the Qdrant index, stores/qdrant/qdrant-lexical.index.ts). A failure
 * rolls the records back, so PostgreSQL never holds a record the index lacks.
 */
export interface LexicalMirror {
  mirror(
    manager: EntityManager,
    documents: readonly LexicalWrite[],
    removed: readonly string[],
    averages: Bm25Averages,
  ): Promise<void>;
}

/** Injection token of the {@link LexicalMirror}, provided with LEXICAL_STORE=qdrant. */
export const LEXICAL_MIRROR = Symbol('LEXICAL_MIRROR');
