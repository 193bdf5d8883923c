import { LsaEmbedding, type LsaModel, type TermCounts } from './lsa';
import { scan, SemanticScanner } from './semantic-scan';

export interface SemanticMatch {
  readonly documentId: string;
  /** Cosine similarity of the document's vector and the query's. */
  readonly score: number;
}

/**
 * Every document's vector under one latent-semantic model (lsa.ts), for the vector side of
 * search with the local embedder: the query's vector (its terms' vectors, weighted) against
 * all of them, exactly, filtered while scanning so that `limit` results come back. The
 * vectors lie back to back in shared memory (a removed document's place is reused), scanned
 * on a thread of their own when a scanner is given (semantic-scan.ts).
 */
export class SemanticIndex {
  private readonly embedding: LsaEmbedding;
  private readonly dimensions: number;
  private readonly slots = new Map<string, number>();
  private ids: Array<string | undefined> = [];
  private tags: Array<readonly string[] | undefined> = [];
  private vectors = new Float32Array(new SharedArrayBuffer(0));
  /** 1 for a slot holding a document. */
  private live = new Uint8Array(new SharedArrayBuffer(0));
  private readonly free: number[] = [];

  constructor(
    readonly model: LsaModel,
    private readonly scanner?: SemanticScanner,
  ) {
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
      if (slot >= this.live.length) this.grow(Math.max(64, (slot + 1) * 2));
      this.slots.set(documentId, slot);
    }
    this.ids[slot] = documentId;
    this.tags[slot] = tags;
    this.vectors.set(this.embedding.embed(counts), slot * this.dimensions);
    this.live[slot] = 1;
  }

  remove(documentId: string): void {
    const slot = this.slots.get(documentId);
    if (slot === undefined) return;
    this.slots.delete(documentId);
    this.live[slot] = 0;
    this.ids[slot] = undefined;
    this.tags[slot] = undefined;
    this.free.push(slot);
  }

  /** The documents nearest the query's terms, best first (ties by id), positive scores only. */
  async search(
    query: TermCounts,
    limit: number,
    accept?: (documentId: string, tags: readonly string[]) => boolean,
  ): Promise<SemanticMatch[]> {
    const q = this.embedding.embed(query);
    if (!q.some((x) => x !== 0)) return [];
    let admitted = this.live;
    if (accept) {
      admitted = new Uint8Array(new SharedArrayBuffer(this.ids.length));
      this.ids.forEach((id, slot) => {
        if (id !== undefined && accept(id, this.tags[slot]!)) admitted[slot] = 1;
      });
    }
    const request = {
      vectors: this.vectors,
      admitted,
      slots: this.ids.length,
      dimensions: this.dimensions,
      query: q,
      // A few more, in case documents were replaced while the thread scanned.
      limit: limit + 4,
    };
    const found = this.scanner ? await this.scanner.scan(request) : scan(request);
    const matches: SemanticMatch[] = [];
    found.slots.forEach((slot, i) => {
      const documentId = this.ids[slot];
      if (documentId !== undefined) matches.push({ documentId, score: found.scores[i] });
    });
    return matches
      .sort((a, b) => b.score - a.score || (a.documentId < b.documentId ? -1 : 1))
      .slice(0, limit);
  }

  private grow(slots: number): void {
    const vectors = new Float32Array(new SharedArrayBuffer(slots * this.dimensions * 4));
    vectors.set(this.vectors);
    const live = new Uint8Array(new SharedArrayBuffer(slots));
    live.set(this.live);
    this.vectors = vectors;
    this.live = live;
  }
}
