import { setImmediate } from 'node:timers/promises';
import type { LexicalIndexState } from './index-state';
import type { LexicalIndex } from './lexical-index';
import type { SnapshotVectors } from './lexical-snapshot';
import type { LsaEmbedding, LsaModel } from '../semantic/lsa';
import { SemanticIndex } from '../semantic/semantic-index';

/**
 * The model's row of each term of the index, looked up by name once rather than once a
 * document: every document's vector is then read from its term ids (a term added to the index
 * since is looked up by name).
 */
export class ModelRows {
  private readonly rows: Int32Array;

  constructor(
    private readonly index: LexicalIndex,
    private readonly embedding: LsaEmbedding,
  ) {
    this.rows = Int32Array.from({ length: index.termCount }, (_, term) => this.lookUp(term));
  }

  /** The document's vector, the same as `embed` of its term counts; undefined when not held. */
  vectorOf(documentId: string): Float32Array | undefined {
    let held = false;
    const vector = this.embedding.embedRows((add) => {
      held = this.index.termIdsOf(documentId, (term, count) => {
        const row = term < this.rows.length ? this.rows[term] : this.lookUp(term);
        // A term only the links to it say (count 0) is not the document's word.
        if (row >= 0 && count > 0) add(row, count);
      });
    });
    return held ? vector : undefined;
  }

  private lookUp(term: number): number {
    return this.embedding.rowOf(this.index.termName(term)) ?? -1;
  }
}

/**
 * The semantic index of the documents `state` holds, from their vectors read back, giving the
 * event loop a turn every few thousand.
 */
export async function semanticIndexOf(
  model: LsaModel,
  state: LexicalIndexState,
  vectors: SnapshotVectors,
): Promise<SemanticIndex> {
  const semantic = new SemanticIndex(model);
  for (let slot = 0; slot < state.ids.length; slot++) {
    if (slot % 5000 === 4999) await setImmediate();
    if (state.alive[slot])
      semantic.setVector(state.ids[slot]!, state.tags[slot]!, vectors.row(slot));
  }
  return semantic;
}
