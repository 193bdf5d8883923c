import { Int8Rows } from './int8-rows';

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

/** Below this share of all chunks, a filtered search scores only the documents it allows. */
const SPARSE_SHARE = 0.25;

/**
 * Approximate cosine search over chunk vectors held in memory, one signed byte a dimension
 * ({@link Int8Rows}: a quarter of float32's memory, sixteen dimensions per SIMD step). The
 * scores it returns are within some 1 % of the cosine; the store computes the exact cosine
 * of the candidates it keeps from their stored float32 vectors (postgres.vector-store.ts), so
 * the order it answers is the exact one among them. Folder and tag filters are answered from
 * inverted sets, and a filter that leaves few documents scores only theirs.
 */
export class ChunkIndex {
  private readonly rows: Int8Rows;
  private capacity = 0;
  /** Slots below this may be in use; scoring stops here. */
  private highWater = 0;
  /** Document ordinal of each slot, -1 for a free slot. */
  private slotDocument = new Int32Array(0);
  private slotChunk = new Int32Array(0);
  private best = new Float64Array(0);
  private bestSlot = new Int32Array(0);
  private second = new Float64Array(0);
  private secondSlot = new Int32Array(0);
  private readonly freeSlots: number[] = [];
  private readonly entries: (Entry | undefined)[] = [];
  private readonly freeOrdinals: number[] = [];
  private readonly byId = new Map<string, Entry>();
  private readonly byFolder = new Map<string, Set<number>>();
  private readonly byTag = new Map<string, Set<number>>();

  constructor(readonly dimensions: number) {
    this.rows = new Int8Rows(dimensions);
  }

  get documentCount(): number {
    return this.byId.size;
  }

  get chunkCount(): number {
    return this.highWater - this.freeSlots.length;
  }

  /** Bytes held by the vectors (the dominant cost: a byte a dimension per chunk slot). */
  get vectorBytes(): number {
    return this.rows.byteLength;
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
      this.rows.set(slot, unit(chunk.vector));
    }
  }

  remove(documentId: string): void {
    const entry = this.byId.get(documentId);
    if (!entry) return;
    for (const slot of entry.slots) {
      this.slotDocument[slot] = -1;
      this.freeSlots.push(slot);
    }
    entry.ancestors.forEach((folder) => removeFrom(this.byFolder, folder, entry.ordinal));
    entry.tags.forEach((tag) => removeFrom(this.byTag, tag, entry.ordinal));
    this.byId.delete(documentId);
    this.entries[entry.ordinal] = undefined;
    this.freeOrdinals.push(entry.ordinal);
  }

  /**
   * The `limit` documents with the best chunk most similar to `query` (approximately: see
   * the class), best first; with `chunksPerDocument` 2, each one's second best chunk too,
   * right after its best (what an exact rescoring needs when two chunks score nearly alike).
   */
  search(
    query: Float32Array,
    limit: number,
    filter: IndexFilter = {},
    chunksPerDocument: 1 | 2 = 1,
  ): IndexHit[] {
    if (query.length !== this.dimensions) {
      throw new Error(`query of ${query.length} dimensions for an index of ${this.dimensions}`);
    }
    if (this.highWater === 0 || limit < 1) return [];
    const q = unit(query);
    if (!q.some((x) => x !== 0)) return [];
    const allowed = this.allowed(filter);
    // Scratch arrays reused across searches (a search runs to the end synchronously).
    if (this.best.length < this.entries.length) {
      this.best = new Float64Array(this.capacity);
      this.bestSlot = new Int32Array(this.capacity);
      this.second = new Float64Array(this.capacity);
      this.secondSlot = new Int32Array(this.capacity);
    }
    const best = this.best.fill(-Infinity, 0, this.entries.length);
    const second = this.second.fill(-Infinity, 0, this.entries.length);
    const { bestSlot, secondSlot } = this;
    const keep = (slot: number, score: number) => {
      const ordinal = this.slotDocument[slot];
      if (ordinal < 0 || (allowed !== undefined && !allowed.has(ordinal))) return;
      if (score > best[ordinal]) {
        second[ordinal] = best[ordinal];
        secondSlot[ordinal] = bestSlot[ordinal];
        best[ordinal] = score;
        bestSlot[ordinal] = slot;
      } else if (score > second[ordinal]) {
        second[ordinal] = score;
        secondSlot[ordinal] = slot;
      }
    };
    if (allowed !== undefined && this.slotsOf(allowed) < this.chunkCount * SPARSE_SHARE) {
      for (const ordinal of allowed) {
        for (const slot of this.entries[ordinal]!.slots) keep(slot, this.rows.score(q, slot));
      }
    } else {
      this.rows.scores(q, this.highWater, keep);
    }
    return topK(best, this.entries.length, limit).flatMap((ordinal) => {
      const documentId = this.entries[ordinal]!.documentId;
      const hits = [
        { documentId, chunkIndex: this.slotChunk[bestSlot[ordinal]], score: best[ordinal] },
      ];
      if (chunksPerDocument === 2 && second[ordinal] > -Infinity) {
        hits.push({
          documentId,
          chunkIndex: this.slotChunk[secondSlot[ordinal]],
          score: second[ordinal],
        });
      }
      return hits;
    });
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

  /** Room for more slots' bookkeeping (the vectors grow in Int8Rows, never copied whole). */
  private grow(): void {
    const capacity = Math.max(1024, Math.ceil(this.capacity * 1.5));
    const slotDocument = new Int32Array(capacity).fill(-1);
    slotDocument.set(this.slotDocument.subarray(0, this.highWater));
    const slotChunk = new Int32Array(capacity);
    slotChunk.set(this.slotChunk.subarray(0, this.highWater));
    this.slotDocument = slotDocument;
    this.slotChunk = slotChunk;
    this.capacity = capacity;
  }
}

/** `vector` scaled to unit length (zeros stay zeros). */
function unit(vector: Float32Array): Float32Array {
  let norm = 0;
  for (let d = 0; d < vector.length; d++) norm += vector[d] * vector[d];
  if (norm === 0 || Math.abs(norm - 1) < 1e-6) return vector;
  const scale = 1 / Math.sqrt(norm);
  return vector.map((x) => x * scale);
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
