import { LsaEmbedding, type LsaModel, type TermCounts } from './lsa';
import { VectorTable } from './vector-table';

export interface SemanticMatch {
  readonly documentId: string;
  /** Cosine similarity of the document's vector and the query's. */
  readonly score: number;
}

/**
 * Which documents a semantic search may answer: the ids admitted (when a filter picks few of
 * them), or a test of each document's id and tags.
 */
export type SemanticFilter =
  | {
      readonly ids: readonly string[];
      /** Names these ids: the rows they admit are remembered under it while nothing changes. */
      readonly key?: string;
    }
  | ((documentId: string, tags: readonly string[]) => boolean);

/**
 * Every document's vector under one latent-semantic model (lsa.ts), for the vector side of
 * search with the local embedder: the query's vector (its terms' vectors, weighted) against
 * all of them, exactly (a SIMD scan, vector-table.ts), filtered while scanning so that
 * `limit` results come back. A removed document's row is reused.
 */
export class SemanticIndex {
  private readonly embedding: LsaEmbedding;
  private readonly table: VectorTable;
  private readonly slots = new Map<string, number>();
  private ids: Array<string | undefined> = [];
  private tags: Array<readonly string[] | undefined> = [];
  private readonly free: number[] = [];
  /** Changes with every document set or removed: what the remembered rows were read at. */
  private version = 0;
  private readonly kept = new Map<string, { version: number; admitted: Uint8Array }>();

  constructor(readonly model: LsaModel) {
    this.embedding = new LsaEmbedding(model);
    this.table = new VectorTable(model.dimensions);
  }

  get size(): number {
    return this.slots.size;
  }

  set(documentId: string, tags: readonly string[], counts: TermCounts): void {
    this.setVector(documentId, tags, this.embedding.embed(counts));
  }

  /** The embedding of {@link model}, for a caller that computes vectors its own way. */
  get embedder(): LsaEmbedding {
    return this.embedding;
  }

  /** Sets a document's vector computed by {@link embedder}. */
  setVector(documentId: string, tags: readonly string[], vector: Float32Array): void {
    let slot = this.slots.get(documentId);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.ids.length;
      this.slots.set(documentId, slot);
    }
    this.ids[slot] = documentId;
    this.tags[slot] = tags;
    this.table.set(slot, vector);
    this.version++;
  }

  /** A document's vector as held (a view, valid until the next document is set). */
  vectorOf(documentId: string): Float32Array | undefined {
    const slot = this.slots.get(documentId);
    return slot === undefined ? undefined : this.table.row(slot);
  }

  remove(documentId: string): void {
    const slot = this.slots.get(documentId);
    if (slot === undefined) return;
    this.slots.delete(documentId);
    this.version++;
    this.ids[slot] = undefined;
    this.tags[slot] = undefined;
    this.free.push(slot);
  }

  /** The documents nearest the query's terms, best first (ties by id), positive scores only. */
  search(query: TermCounts, limit: number, filter?: SemanticFilter): SemanticMatch[] {
    const q = this.embedding.embed(query);
    if (!q.some((x) => x !== 0) || limit <= 0) return [];
    const admitted = this.admitted(filter);
    // The best `limit` so far, unordered, and the worst of them once there are that many.
    const best: SemanticMatch[] = [];
    let floor = 0;
    this.table.scores(q, this.ids.length, (slot, score) => {
      if (!(score > 0) || score < floor || (admitted && admitted[slot] === 0)) return;
      const documentId = this.ids[slot];
      if (documentId === undefined) return;
      best.push({ documentId, score });
      if (best.length >= limit * 4) floor = keepBest(best, limit);
    });
    keepBest(best, limit);
    return best;
  }

  /** 1 for each slot the filter admits (`undefined`: every document). */
  private admitted(filter: SemanticFilter | undefined): Uint8Array | undefined {
    if (filter === undefined) return undefined;
    if (typeof filter !== 'function' && filter.key !== undefined) {
      const kept = this.kept.get(filter.key);
      if (kept !== undefined && kept.version === this.version) return kept.admitted;
      const admitted = this.admittedNow({ ids: filter.ids });
      if (this.kept.size >= KEPT_FILTERS) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(filter.key, { version: this.version, admitted });
      return admitted;
    }
    return this.admittedNow(filter);
  }

  private admittedNow(filter: SemanticFilter): Uint8Array {
    const admitted = new Uint8Array(this.ids.length);
    if (typeof filter === 'function') {
      this.ids.forEach((id, slot) => {
        if (id !== undefined && filter(id, this.tags[slot]!)) admitted[slot] = 1;
      });
    } else {
      for (const id of filter.ids) {
        const slot = this.slots.get(id);
        if (slot !== undefined) admitted[slot] = 1;
      }
    }
    return admitted;
  }
}

/** Filters whose admitted rows are remembered (the last principals' readable folders). */
const KEPT_FILTERS = 8;

/** Sorts `matches` best first (ties by id), keeps `limit`, and gives the worst kept's score. */
function keepBest(matches: SemanticMatch[], limit: number): number {
  matches.sort((a, b) => b.score - a.score || (a.documentId < b.documentId ? -1 : 1));
  matches.length = Math.min(matches.length, limit);
  return matches.length >= limit ? matches[matches.length - 1].score : 0;
}
