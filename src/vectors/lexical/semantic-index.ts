import { LsaEmbedding, type LsaModel, type TermCounts } from './lsa';

export interface SemanticMatch {
  readonly documentId: string;
  /** Cosine similarity of the document's vector and the query's. */
  readonly score: number;
}

/**
 * Every document's vector under one latent-semantic model (lsa.ts), for the vector side of
 * search with the local embedder: the query's vector (its terms' vectors, weighted) against
 * all of them, exactly, filtered while scanning so that `limit` results come back. The
 * vectors lie back to back in one array (a removed document's place is reused).
 */
export class SemanticIndex {
  private readonly embedding: LsaEmbedding;
  private readonly dimensions: number;
  private readonly slots = new Map<string, number>();
  private ids: Array<string | undefined> = [];
  private tags: Array<readonly string[] | undefined> = [];
  private vectors = new Float32Array(0);
  private readonly free: number[] = [];

  constructor(readonly model: LsaModel) {
    this.embedding = new LsaEmbedding(model);
    this.dimensions = model.dimensions;
  }

  get size(): number {
    return this.slots.size;
  }

  set(documentId: string, tags: readonly string[], counts: TermCounts): void {
    let slot = this.slots.get(documentId);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.ids.length;
      if ((slot + 1) * this.dimensions > this.vectors.length) {
        const grown = new Float32Array(Math.max(64, (slot + 1) * 2) * this.dimensions);
        grown.set(this.vectors);
        this.vectors = grown;
      }
      this.slots.set(documentId, slot);
    }
    this.ids[slot] = documentId;
    this.tags[slot] = tags;
    this.vectors.set(this.embedding.embed(counts), slot * this.dimensions);
  }

  remove(documentId: string): void {
    const slot = this.slots.get(documentId);
    if (slot === undefined) return;
    this.slots.delete(documentId);
    this.ids[slot] = undefined;
    this.tags[slot] = undefined;
    this.free.push(slot);
  }

  /** The documents nearest the query's terms, best first (ties by id), positive scores only. */
  search(
    query: TermCounts,
    limit: number,
    accept?: (documentId: string, tags: readonly string[]) => boolean,
  ): SemanticMatch[] {
    const q = this.embedding.embed(query);
    if (!q.some((x) => x !== 0)) return [];
    const d = this.dimensions;
    const vectors = this.vectors;
    const found: SemanticMatch[] = [];
    let floor = 0;
    for (let slot = 0, end = this.ids.length; slot < end; slot++) {
      const documentId = this.ids[slot];
      if (documentId === undefined) continue;
      // Four sums at a time: the scan is most of a semantic search's time.
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let j = 0;
      for (let at = slot * d; j + 3 < d; j += 4, at += 4) {
        s0 += q[j] * vectors[at];
        s1 += q[j + 1] * vectors[at + 1];
        s2 += q[j + 2] * vectors[at + 2];
        s3 += q[j + 3] * vectors[at + 3];
      }
      for (let at = slot * d + j; j < d; j++, at++) s0 += q[j] * vectors[at];
      const score = s0 + s1 + s2 + s3;
      if (!(score > 0) || (found.length >= limit && score < floor)) continue;
      if (accept && !accept(documentId, this.tags[slot]!)) continue;
      found.push({ documentId, score });
      if (found.length >= limit * 4) {
        found.sort(byScore);
        found.length = limit;
        floor = found[limit - 1].score;
      }
    }
    return found.sort(byScore).slice(0, limit);
  }
}

function byScore(a: SemanticMatch, b: SemanticMatch): number {
  return b.score - a.score || (a.documentId < b.documentId ? -1 : 1);
}
