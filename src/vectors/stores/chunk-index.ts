export interface IndexedChunk {
  readonly chunkIndex: number;
  readonly vector: Float32Array;
}

/** A document as the in-memory index holds it. */
export interface IndexedDocument {
  readonly documentId: string;
  /** Revision the chunks were embedded from (lets a reader skip what it already holds). */
  readonly revision?: number;
  readonly tags: readonly string[];
  readonly ancestors: readonly string[];
  readonly chunks: readonly IndexedChunk[];
}

export interface IndexFilter {
  /** Folder (ending in `/`) the document must be under. */
  readonly folder?: string;
  /** Tags the document must all carry. */
  readonly tags?: readonly string[];
  /** Folders (each ending in `/`) the document must be under one of. */
  readonly folders?: readonly string[];
}

export interface IndexHit {
  readonly documentId: string;
  readonly chunkIndex: number;
  readonly score: number;
}

interface Entry {
  readonly documentId: string;
  readonly revision: number | undefined;
  readonly ordinal: number;
  readonly slots: number[];
  readonly tags: readonly string[];
  readonly ancestors: readonly string[];
}

/**
 * Slots per block of vectors. The index grows a block at a time (4096 × 768 dimensions ×
 * 4 bytes = 12.6 MB for the local embedder), never by copying what it holds: doubling one
 * big array at 30 000 chunks would allocate 200 MB and hold the event loop for a tenth of a
 * second.
 */
const BLOCK_BITS = 12;
const BLOCK_SLOTS = 1 << BLOCK_BITS;
const SLOT_MASK = BLOCK_SLOTS - 1;
/** Below this share of all chunks, a filtered search scores only the documents it allows. */
const SPARSE_SHARE = 0.25;

/**
 * Exact cosine search over chunk vectors held in memory.
 *
 * Vectors are stored in blocks of {@link BLOCK_SLOTS} slots, each dimension-major (the
 * block's values of dimension 0, then of dimension 1, ...), so scoring walks memory in
 * order, four dimensions per pass, and skips every dimension where the query is zero. Queries from the local
 * embedder are sparse (a few dozen non-zero dimensions), which makes a scan of 30 000 chunks
 * take well under a millisecond; a dense query (OpenAI) costs `dimensions × chunks`
 * multiply-adds. Folder and tag filters are answered from inverted sets, and a filter that
 * leaves few documents scores only theirs. Stored vectors are unit length, so the dot
 * product is the cosine.
 */
export class ChunkIndex {
  private capacity = 0;
  /** Slots below this may be in use; scoring stops here. */
  private highWater = 0;
  /** Block `b` holds slots `b × BLOCK_SLOTS` onwards, dimension `d` at `d × BLOCK_SLOTS`. */
  private readonly blocks: Float32Array[] = [];
  /** Document ordinal of each slot, -1 for a free slot. */
  private slotDocument = new Int32Array(0);
  private slotChunk = new Int32Array(0);
  private scores = new Float64Array(0);
  private best = new Float64Array(0);
  private bestSlot = new Int32Array(0);
  private readonly freeSlots: number[] = [];
  private readonly entries: (Entry | undefined)[] = [];
  private readonly freeOrdinals: number[] = [];
  private readonly byId = new Map<string, Entry>();
  private readonly byFolder = new Map<string, Set<number>>();
  private readonly byTag = new Map<string, Set<number>>();

  constructor(readonly dimensions: number) {}

  get documentCount(): number {
    return this.byId.size;
  }

  get chunkCount(): number {
    return this.highWater - this.freeSlots.length;
  }

  /** Bytes held by the vectors (the dominant cost: 4 × dimensions per chunk slot). */
  get vectorBytes(): number {
    return this.blocks.length * BLOCK_SLOTS * this.dimensions * 4;
  }

  /** Revision and chunk count held for a document, `undefined` when none. */
  versionOf(documentId: string): { revision: number | undefined; chunks: number } | undefined {
    const entry = this.byId.get(documentId);
    return entry && { revision: entry.revision, chunks: entry.slots.length };
  }

  /** Replaces the document's chunks (no chunks: removes it). */
  set(document: IndexedDocument): void {
    this.remove(document.documentId);
    if (document.chunks.length === 0) return;
    for (const chunk of document.chunks) {
      if (chunk.vector.length !== this.dimensions) {
        throw new Error(
          `vector of ${chunk.vector.length} dimensions for an index of ${this.dimensions}`,
        );
      }
    }
    const ordinal = this.freeOrdinals.pop() ?? this.entries.length;
    const entry: Entry = {
      documentId: document.documentId,
      revision: document.revision,
      ordinal,
      slots: [],
      tags: [...new Set(document.tags)],
      ancestors: [...new Set(document.ancestors)],
    };
    this.entries[ordinal] = entry;
    this.byId.set(document.documentId, entry);
    entry.ancestors.forEach((folder) => addTo(this.byFolder, folder, ordinal));
    entry.tags.forEach((tag) => addTo(this.byTag, tag, ordinal));
    for (const chunk of document.chunks) {
      const slot = this.allocate();
      entry.slots.push(slot);
      this.slotDocument[slot] = ordinal;
      this.slotChunk[slot] = chunk.chunkIndex;
      const vector = chunk.vector;
      let norm = 0;
      for (let d = 0; d < vector.length; d++) norm += vector[d] * vector[d];
      const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      const block = this.blocks[slot >> BLOCK_BITS];
      const offset = slot & SLOT_MASK;
      for (let d = 0; d < vector.length; d++) {
        block[d * BLOCK_SLOTS + offset] = vector[d] * scale;
      }
    }
  }

  remove(documentId: string): void {
    const entry = this.byId.get(documentId);
    if (!entry) return;
    for (const slot of entry.slots) {
      const block = this.blocks[slot >> BLOCK_BITS];
      const offset = slot & SLOT_MASK;
      for (let d = 0; d < this.dimensions; d++) block[d * BLOCK_SLOTS + offset] = 0;
      this.slotDocument[slot] = -1;
      this.freeSlots.push(slot);
    }
    entry.ancestors.forEach((folder) => removeFrom(this.byFolder, folder, entry.ordinal));
    entry.tags.forEach((tag) => removeFrom(this.byTag, tag, entry.ordinal));
    this.byId.delete(documentId);
    this.entries[entry.ordinal] = undefined;
    this.freeOrdinals.push(entry.ordinal);
  }

  /** The `limit` documents with the best chunk most similar to `query`, best first. */
  search(query: Float32Array, limit: number, filter: IndexFilter = {}): IndexHit[] {
    if (query.length !== this.dimensions) {
      throw new Error(`query of ${query.length} dimensions for an index of ${this.dimensions}`);
    }
    if (this.highWater === 0 || limit < 1) return [];
    const dims: number[] = [];
    const weights: number[] = [];
    let norm = 0;
    for (let d = 0; d < query.length; d++) {
      if (query[d] === 0) continue;
      dims.push(d);
      weights.push(query[d]);
      norm += query[d] * query[d];
    }
    if (norm === 0) return [];
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < weights.length; i++) weights[i] *= scale;

    const allowed = this.allowed(filter);
    // Scratch arrays reused across searches (a search runs to the end synchronously).
    if (this.best.length < this.entries.length) {
      this.best = new Float64Array(this.capacity);
      this.bestSlot = new Int32Array(this.capacity);
    }
    const best = this.best.fill(-Infinity, 0, this.entries.length);
    const bestSlot = this.bestSlot;
    if (allowed !== undefined && this.slotsOf(allowed) < this.chunkCount * SPARSE_SHARE) {
      this.scoreSparse(allowed, dims, weights, best, bestSlot);
    } else {
      this.scoreAll(dims, weights, allowed, best, bestSlot);
    }
    return topK(best, this.entries.length, limit).map((ordinal) => ({
      documentId: this.entries[ordinal]!.documentId,
      chunkIndex: this.slotChunk[bestSlot[ordinal]],
      score: best[ordinal],
    }));
  }

  /** Every chunk scored column by column (four query dimensions per pass over a block). */
  private scoreAll(
    dims: number[],
    weights: number[],
    allowed: Set<number> | undefined,
    best: Float64Array,
    bestSlot: Int32Array,
  ): void {
    const n = this.highWater;
    const scores = this.scores;
    scores.fill(0, 0, n);
    for (let b = 0; b * BLOCK_SLOTS < n; b++) {
      const block = this.blocks[b];
      const base = b * BLOCK_SLOTS;
      const slots = Math.min(BLOCK_SLOTS, n - base);
      const column = (i: number) =>
        block.subarray(dims[i] * BLOCK_SLOTS, dims[i] * BLOCK_SLOTS + slots);
      const out = scores.subarray(base, base + slots);
      let i = 0;
      for (; i + 3 < dims.length; i += 4) {
        const [c0, c1, c2, c3] = [column(i), column(i + 1), column(i + 2), column(i + 3)];
        const [w0, w1, w2, w3] = [weights[i], weights[i + 1], weights[i + 2], weights[i + 3]];
        for (let s = 0; s < slots; s++) out[s] += w0 * c0[s] + w1 * c1[s] + w2 * c2[s] + w3 * c3[s];
      }
      for (; i < dims.length; i++) {
        const c = column(i);
        const w = weights[i];
        for (let s = 0; s < slots; s++) out[s] += w * c[s];
      }
    }
    for (let s = 0; s < n; s++) {
      const ordinal = this.slotDocument[s];
      if (ordinal < 0 || (allowed !== undefined && !allowed.has(ordinal))) continue;
      if (scores[s] > best[ordinal]) {
        best[ordinal] = scores[s];
        bestSlot[ordinal] = s;
      }
    }
  }

  /** Only the chunks of the allowed documents, each scored on the query's dimensions. */
  private scoreSparse(
    allowed: Set<number>,
    dims: number[],
    weights: number[],
    best: Float64Array,
    bestSlot: Int32Array,
  ): void {
    for (const ordinal of allowed) {
      for (const slot of this.entries[ordinal]!.slots) {
        const block = this.blocks[slot >> BLOCK_BITS];
        const offset = slot & SLOT_MASK;
        let score = 0;
        for (let i = 0; i < dims.length; i++) {
          score += weights[i] * block[dims[i] * BLOCK_SLOTS + offset];
        }
        if (score > best[ordinal]) {
          best[ordinal] = score;
          bestSlot[ordinal] = slot;
        }
      }
    }
  }

  /** Ordinals the filter allows, `undefined` for no filter. */
  private allowed(filter: IndexFilter): Set<number> | undefined {
    const sets: Set<number>[] = [];
    if (filter.folder !== undefined) sets.push(this.byFolder.get(filter.folder) ?? new Set());
    for (const tag of filter.tags ?? []) sets.push(this.byTag.get(tag) ?? new Set());
    if (filter.folders !== undefined) {
      const under = new Set<number>();
      for (const folder of filter.folders) {
        for (const ordinal of this.byFolder.get(folder) ?? []) under.add(ordinal);
      }
      sets.push(under);
    }
    if (sets.length === 0) return undefined;
    sets.sort((a, b) => a.size - b.size);
    const [smallest, ...others] = sets;
    const result = new Set<number>();
    for (const ordinal of smallest) {
      if (others.every((set) => set.has(ordinal))) result.add(ordinal);
    }
    return result;
  }

  private slotsOf(ordinals: Set<number>): number {
    let slots = 0;
    for (const ordinal of ordinals) slots += this.entries[ordinal]!.slots.length;
    return slots;
  }

  private allocate(): number {
    const free = this.freeSlots.pop();
    if (free !== undefined) return free;
    if (this.highWater === this.capacity) this.grow();
    return this.highWater++;
  }

  /** One more block of slots; what the index holds stays where it is. */
  private grow(): void {
    this.blocks.push(new Float32Array(this.dimensions * BLOCK_SLOTS));
    const capacity = this.capacity + BLOCK_SLOTS;
    const slotDocument = new Int32Array(capacity).fill(-1);
    slotDocument.set(this.slotDocument.subarray(0, this.highWater));
    const slotChunk = new Int32Array(capacity);
    slotChunk.set(this.slotChunk.subarray(0, this.highWater));
    this.slotDocument = slotDocument;
    this.slotChunk = slotChunk;
    this.scores = new Float64Array(capacity);
    this.capacity = capacity;
  }
}

function addTo(map: Map<string, Set<number>>, key: string, ordinal: number): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(ordinal);
}

function removeFrom(map: Map<string, Set<number>>, key: string, ordinal: number): void {
  const set = map.get(key);
  set?.delete(ordinal);
  if (set?.size === 0) map.delete(key);
}

/** Indexes of the `k` largest finite values among the first `n`, largest first (a bounded min-heap). */
function topK(values: Float64Array, n: number, k: number): number[] {
  const heap: number[] = [];
  for (let i = 0; i < n; i++) {
    const value = values[i];
    if (value === -Infinity) continue;
    if (heap.length < k) {
      heap.push(i);
      for (let c = heap.length - 1; c > 0;) {
        const p = (c - 1) >> 1;
        if (values[heap[c]] >= values[heap[p]]) break;
        [heap[c], heap[p]] = [heap[p], heap[c]];
        c = p;
      }
    } else if (value > values[heap[0]]) {
      heap[0] = i;
      for (let p = 0; ;) {
        const l = 2 * p + 1;
        const r = l + 1;
        let m = p;
        if (l < heap.length && values[heap[l]] < values[heap[m]]) m = l;
        if (r < heap.length && values[heap[r]] < values[heap[m]]) m = r;
        if (m === p) break;
        [heap[m], heap[p]] = [heap[p], heap[m]];
        p = m;
      }
    }
  }
  return heap.sort((a, b) => values[b] - values[a] || a - b);
}
