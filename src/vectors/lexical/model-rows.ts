import type { LexicalIndex } from './lexical-index';
import type { LsaEmbedding } from './lsa';

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
        if (row >= 0) add(row, count);
      });
    });
    return held ? vector : undefined;
  }

  private lookUp(term: number): number {
    return this.embedding.rowOf(this.index.termName(term)) ?? -1;
  }
}
