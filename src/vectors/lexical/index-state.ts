import type { PostingStoreState } from './posting-store';

/**
 * What an index holds, by reference (lexical-snapshot.ts writes and reads it): the terms by
 * id, the postings, and per slot (`ids.length` slots, a removed document's slot empty) its id,
 * tags, term ids, passage lengths (`passageLengths` from `passageStart`, `passageCounts` of
 * them), revision, whether it is alive, and its three field lengths back to back.
 */
export interface LexicalIndexState {
  readonly terms: readonly string[];
  readonly store: PostingStoreState;
  readonly ids: ReadonlyArray<string | undefined>;
  readonly tags: ReadonlyArray<readonly string[] | undefined>;
  readonly docTerms: ReadonlyArray<Uint8Array | undefined>;
  readonly passageLengths: Int32Array;
  readonly passageStart: Int32Array;
  readonly passageCounts: Int32Array;
  readonly revisions: Int32Array;
  readonly alive: Uint8Array;
  readonly lengths: Float64Array;
}
