export interface IndexedChunk {
  readonly chunkIndex: number;
  readonly vector: Float32Array;
}

/** A document as the in-memory index holds it. */
export interface IndexedDocument {
  readonly documentId: string;
  readonly tags: readonly string[];
  readonly ancestors: readonly string[];
  readonly chunks: readonly IndexedChunk[];
}

export interface IndexFilter {
  /** Folder (ending in `/`) the document must be under. */
  readonly folder?: string;
  /** Tags the document must all carry. */
  readonly tags?: readonly string[];
}

export interface IndexHit {
  readonly documentId: string;
  readonly chunkIndex: number;
  readonly score: number;
}

interface Entry {
  readonly documentId: string;
  readonly ordinal: number;
  readonly slots: number[];
  readonly tags: ReadonlySet<string>;
  readonly ancestors: ReadonlySet<string>;
}

const INITIAL_CAPACITY = 1024;

/**
 * Exact cosine search over chunk vectors held in memory.
 *
 * Vectors are stored dimension-major (all chunks' values of dimension 0, then of
 * dimension 1, ...) in one Float32Array, so scoring walks memory in order and skips every
 * dimension where the query is zero. Queries from the local embedder are sparse (a few
 * dozen non-zero dimensions), which makes a scan of 30 000 chunks take about a millisecond;
 * a dense query (OpenAI) costs `dimensions × chunks` multiply-adds. Stored vectors are
 * unit length, so the dot product is the cosine.
 */
export class ChunkIndex {
  private capacity = 0;
  /** Slots below this may be in use; scoring stops here. */
  private highWater = 0;
  private columns = new Float32Array(0);
  /** Document ordinal of each slot, -1 for a free slot. */
  private slotDocument = new Int32Array(0);
  private slotChunk = new Int32Array(0);
  private readonly freeSlots: number[] = [];
  private readonly entries: (Entry | undefined)[] = [];
  private readonly freeOrdinals: number[] = [];
  private readonly byId = new Map<string, Entry>();
  private scores = new Float32Array(0);

  constructor(readonly dimensions: number) {}

  get documentCount(): number {
    return this.byId.size;
  }

  get chunkCount(): number {
    return this.highWater - this.freeSlots.length;
  }

  /** Bytes held by the vectors (the dominant cost: 4 × dimensions per chunk slot). */
  get vectorBytes(): number {
    return this.columns.byteLength;
  }

  /** Replaces the document's chunks (no chunks: removes it). */
  set(document: IndexedDocument): void {
    this.remove(document.documentId);
    if (document.chunks.length === 0) return;
    const ordinal = this.freeOrdinals.pop() ?? this.entries.length;
    const entry: Entry = {
      documentId: document.documentId,
      ordinal,
      slots: [],
      tags: new Set(document.tags),
      ancestors: new Set(document.ancestors),
    };
    this.entries[ordinal] = entry;
    this.byId.set(document.documentId, entry);
    for (const chunk of document.chunks) {
      if (chunk.vector.length !== this.dimensions) {
        throw new Error(
          `vector of ${chunk.vector.length} dimensions for an index of ${this.dimensions}`,
        );
      }
      const slot = this.allocate();
      entry.slots.push(slot);
      this.slotDocument[slot] = ordinal;
      this.slotChunk[slot] = chunk.chunkIndex;
      const vector = chunk.vector;
      let norm = 0;
      for (let d = 0; d < vector.length; d++) norm += vector[d] * vector[d];
      const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      for (let d = 0; d < vector.length; d++) {
        this.columns[d * this.capacity + slot] = vector[d] * scale;
      }
    }
  }

  remove(documentId: string): void {
    const entry = this.byId.get(documentId);
    if (!entry) return;
    for (const slot of entry.slots) {
      for (let d = 0; d < this.dimensions; d++) this.columns[d * this.capacity + slot] = 0;
      this.slotDocument[slot] = -1;
      this.freeSlots.push(slot);
    }
    this.byId.delete(documentId);
    this.entries[entry.ordinal] = undefined;
    this.freeOrdinals.push(entry.ordinal);
  }

  /** The `limit` documents with the best chunk most similar to `query`, best first. */
  search(query: Float32Array, limit: number, filter: IndexFilter = {}): IndexHit[] {
    if (query.length !== this.dimensions) {
      throw new Error(`query of ${query.length} dimensions for an index of ${this.dimensions}`);
    }
    const n = this.highWater;
    if (n === 0 || limit < 1) return [];
    let norm = 0;
    for (let d = 0; d < query.length; d++) norm += query[d] * query[d];
    if (norm === 0) return [];
    const scale = 1 / Math.sqrt(norm);

    const scores = this.scores;
    scores.fill(0, 0, n);
    const columns = this.columns;
    for (let d = 0; d < this.dimensions; d++) {
      const q = query[d] * scale;
      if (q === 0) continue;
      const base = d * this.capacity;
      for (let s = 0; s < n; s++) scores[s] += q * columns[base + s];
    }

    // Best chunk per document, among documents the filter allows (decided once each).
    const documents = this.entries.length;
    const allowed = new Int8Array(documents);
    const best = new Float32Array(documents).fill(-Infinity);
    const bestSlot = new Int32Array(documents);
    for (let s = 0; s < n; s++) {
      const ordinal = this.slotDocument[s];
      if (ordinal < 0) continue;
      if (allowed[ordinal] === 0) allowed[ordinal] = this.matches(ordinal, filter) ? 1 : -1;
      if (allowed[ordinal] < 0) continue;
      if (scores[s] > best[ordinal]) {
        best[ordinal] = scores[s];
        bestSlot[ordinal] = s;
      }
    }
    return topK(best, limit).map((ordinal) => ({
      documentId: this.entries[ordinal]!.documentId,
      chunkIndex: this.slotChunk[bestSlot[ordinal]],
      score: best[ordinal],
    }));
  }

  private matches(ordinal: number, filter: IndexFilter): boolean {
    const entry = this.entries[ordinal]!;
    if (filter.folder !== undefined && !entry.ancestors.has(filter.folder)) return false;
    return (filter.tags ?? []).every((tag) => entry.tags.has(tag));
  }

  private allocate(): number {
    const free = this.freeSlots.pop();
    if (free !== undefined) return free;
    if (this.highWater === this.capacity) this.grow();
    return this.highWater++;
  }

  private grow(): void {
    const capacity = Math.max(INITIAL_CAPACITY, this.capacity * 2);
    const columns = new Float32Array(this.dimensions * capacity);
    for (let d = 0; d < this.dimensions; d++) {
      const start = d * this.capacity;
      columns.set(this.columns.subarray(start, start + this.highWater), d * capacity);
    }
    const slotDocument = new Int32Array(capacity).fill(-1);
    slotDocument.set(this.slotDocument.subarray(0, this.highWater));
    const slotChunk = new Int32Array(capacity);
    slotChunk.set(this.slotChunk.subarray(0, this.highWater));
    this.columns = columns;
    this.slotDocument = slotDocument;
    this.slotChunk = slotChunk;
    this.scores = new Float32Array(capacity);
    this.capacity = capacity;
  }
}

/** Indexes of the `k` largest finite values, largest first (a bounded min-heap). */
function topK(values: Float32Array, k: number): number[] {
  const heap: number[] = [];
  const less = (a: number, b: number) => values[a] < values[b];
  for (let i = 0; i < values.length; i++) {
    if (values[i] === -Infinity) continue;
    if (heap.length < k) {
      heap.push(i);
      for (let c = heap.length - 1; c > 0;) {
        const p = (c - 1) >> 1;
        if (!less(heap[c], heap[p])) break;
        [heap[c], heap[p]] = [heap[p], heap[c]];
        c = p;
      }
    } else if (less(heap[0], i)) {
      heap[0] = i;
      for (let p = 0; ;) {
        const l = 2 * p + 1;
        const r = l + 1;
        let m = p;
        if (l < heap.length && less(heap[l], heap[m])) m = l;
        if (r < heap.length && less(heap[r], heap[m])) m = r;
        if (m === p) break;
        [heap[m], heap[p]] = [heap[p], heap[m]];
        p = m;
      }
    }
  }
  return heap.sort((a, b) => values[b] - values[a] || a - b);
}
