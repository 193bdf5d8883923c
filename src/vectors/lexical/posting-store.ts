/**
 * The postings of every term of the lexical index, packed in a few large slabs instead of one
 * growable array per term (docs/performance.md, "Memory").
 *
 * A posting is two 32-bit words: the document's slot, and its counts packed (see
 * {@link packPosting}). A term's postings are a chain of blocks, each four times the size of
 * the one before it (2, 8, 32, 128, 512, then 2 048 postings), all cut from slabs
 * of 4 MiB that are never given back: appending never copies what a term holds (the doubling
 * arrays this replaces left their earlier copies to the allocator, some 40 % of the process's
 * memory while documents arrived), a rare term costs its 24-byte first block rather than a
 * typed array of its own (some 200 bytes with its objects), and blocks freed when a chain is
 * compacted are reused by the next chains of their size.
 *
 * Postings of one term are kept in increasing slot order (slots are given in increasing order,
 * and renumbering keeps the order): a block's first slot tells whether a slot can be in it.
 */

/** Words per slab: 4 MiB. */
const SLAB_BITS = 20;
const SLAB_WORDS = 1 << SLAB_BITS;
const OFFSET_MASK = SLAB_WORDS - 1;
/** A block's header: the next block of the chain, and the postings it holds. */
const HEADER = 2;
/** Postings a block of each size class holds. */
const CAPACITIES = [2, 8, 32, 128, 512, 2048] as const;
const LAST_CLASS = CAPACITIES.length - 1;
/** The end of a chain. */
export const NO_BLOCK = 0xffffffff;

/**
 * The counts of one posting in one word: title (3 bits), headings (4), body (8), the links'
 * texts (the anchor field, 2), the index of the passage holding the term best (11) and its
 * count there (4), each capped at its width. The caps change nothing BM25 can tell apart (a
 * term said 255 times in a body scores as one said 300 times, to the sixth digit; the anchor
 * field saturates by its third mention, docs/search.md), a title says a word at most a few
 * times, and a document has at most 2 047 passages of note (a 1 MiB one some 1 300).
 * `passage` is a record's passage word (lexical-record.ts): index, count, anchor count.
 */
export function packPosting(fields: number, passage: number): number {
  const title = Math.min(fields & 0xff, 0x7);
  const headings = Math.min((fields >>> 8) & 0xff, 0xf);
  const body = Math.min(fields >>> 16, 0xff);
  const anchor = Math.min(passage >>> 28, 0x3);
  const index = Math.min(passage & 0xffff, 0x7ff);
  const count = Math.min((passage >>> 16) & 0xfff, 0xf);
  return (
    (title | (headings << 3) | (body << 7) | (anchor << 15) | (index << 17) | (count << 28)) >>> 0
  );
}

export const titleCount = (packed: number) => packed & 0x7;
export const headingsCount = (packed: number) => (packed >>> 3) & 0xf;
export const bodyCount = (packed: number) => (packed >>> 7) & 0xff;
export const anchorCount = (packed: number) => (packed >>> 15) & 0x3;
export const passageIndex = (packed: number) => (packed >>> 17) & 0x7ff;
export const passageCount = (packed: number) => packed >>> 28;

/** Visits one block's postings: `data[at]` is a slot, `data[at + 1]` its packed counts. */
export type BlockVisitor = (data: Uint32Array, from: number, to: number) => void;

/**
 * A store's own arrays, by reference (lexical-snapshot.ts writes and reads them): its slabs
 * (each of {@link SLAB_BYTES}), the words used in the last one, the free blocks of each size
 * class, and per term (`head.length` terms) its chain's ends and counts.
 */
export interface PostingStoreState {
  readonly slabs: readonly Uint32Array[];
  readonly used: number;
  readonly free: ReadonlyArray<readonly number[]>;
  readonly head: Uint32Array;
  readonly tail: Uint32Array;
  readonly sizes: Int32Array;
  readonly deadCounts: Int32Array;
}

export const SLAB_BYTES = SLAB_WORDS * 4;

export class PostingStore {
  private readonly slabs: Uint32Array[] = [];
  /** Words used in the last slab. */
  private used = SLAB_WORDS;
  /** Freed blocks of each size class, by their global index. */
  private free: number[][] = CAPACITIES.map(() => []);
  /** Per term: first and last block of its chain, postings held, postings of removed slots. */
  private head: Uint32Array = new Uint32Array(0);
  private tail: Uint32Array = new Uint32Array(0);
  private sizes: Int32Array = new Int32Array(0);
  private deadCounts: Int32Array = new Int32Array(0);
  private terms = 0;

  /** What the store holds, without copying it: valid until the store next changes. */
  state(): PostingStoreState {
    return {
      slabs: this.slabs,
      used: this.used,
      free: this.free,
      head: this.head.subarray(0, this.terms),
      tail: this.tail.subarray(0, this.terms),
      sizes: this.sizes.subarray(0, this.terms),
      deadCounts: this.deadCounts.subarray(0, this.terms),
    };
  }

  /** A store holding `state`'s arrays themselves (they must not be shared with another). */
  static restore(state: PostingStoreState): PostingStore {
    const terms = state.head.length;
    const words = state.slabs.length * SLAB_WORDS;
    const inside = (block: number) => block === NO_BLOCK || block < words;
    if (
      state.slabs.some((slab) => slab.length !== SLAB_WORDS) ||
      state.used > SLAB_WORDS ||
      state.free.length !== CAPACITIES.length ||
      [state.tail, state.sizes, state.deadCounts].some((a) => a.length !== terms) ||
      !state.head.every(inside) ||
      !state.tail.every(inside)
    ) {
      throw new Error('postings of inconsistent sizes');
    }
    const store = new PostingStore();
    store.slabs.push(...state.slabs);
    store.used = state.slabs.length === 0 ? SLAB_WORDS : state.used;
    state.free.forEach((blocks, size) => (store.free[size] = [...blocks]));
    store.head = state.head;
    store.tail = state.tail;
    store.sizes = state.sizes;
    store.deadCounts = state.deadCounts;
    store.terms = terms;
    return store;
  }

  /** Bytes of the slabs (the postings, their headers and the free room). */
  get bytes(): number {
    return this.slabs.length * SLAB_WORDS * 4;
  }

  /** A new term, its chain empty; returns its id (ids are 0, 1, 2, ...). */
  addTerm(): number {
    const id = this.terms++;
    if (id >= this.head.length) {
      const length = Math.max(1024, this.head.length * 2);
      this.head = grown(this.head, length, NO_BLOCK);
      this.tail = grown(this.tail, length, NO_BLOCK);
      this.sizes = grown(this.sizes, length, 0);
      this.deadCounts = grown(this.deadCounts, length, 0);
    }
    this.head[id] = NO_BLOCK;
    this.tail[id] = NO_BLOCK;
    return id;
  }

  /** Postings of the term, removed ones included. */
  size(term: number): number {
    return this.sizes[term];
  }

  /** Postings of live documents (the term's document frequency). */
  live(term: number): number {
    return this.sizes[term] - this.deadCounts[term];
  }

  /** Notes that one posting of the term belongs to a removed document. */
  markDead(term: number): void {
    this.deadCounts[term]++;
  }

  dead(term: number): number {
    return this.deadCounts[term];
  }

  /** Appends a posting; `slot` must be above every slot the term holds. */
  add(term: number, slot: number, packed: number): void {
    let block = this.tail[term];
    let data: Uint32Array;
    let at: number;
    if (block === NO_BLOCK) {
      block = this.allocate(0);
      this.head[term] = block;
      this.tail[term] = block;
    } else {
      data = this.slabs[block >>> SLAB_BITS];
      at = block & OFFSET_MASK;
      const capacity = CAPACITIES[this.classOf(data, at)];
      if ((data[at + 1] & 0xffffff) === capacity) {
        const next = this.allocate(Math.min(this.classOf(data, at) + 1, LAST_CLASS));
        data[at] = next;
        this.tail[term] = next;
        block = next;
      }
    }
    data = this.slabs[block >>> SLAB_BITS];
    at = block & OFFSET_MASK;
    const count = data[at + 1] & 0xffffff;
    const word = at + HEADER + count * 2;
    data[word] = slot;
    data[word + 1] = packed;
    data[at + 1] = (data[at + 1] & 0xff000000) | (count + 1);
    this.sizes[term]++;
  }

  /** Calls `visit` with each block of the term's chain, in slot order. */
  forEachBlock(term: number, visit: BlockVisitor): void {
    for (let block = this.head[term]; block !== NO_BLOCK;) {
      const data = this.slabs[block >>> SLAB_BITS];
      const at = block & OFFSET_MASK;
      const from = at + HEADER;
      visit(data, from, from + (data[at + 1] & 0xffffff) * 2);
      block = data[at];
    }
  }

  /** The packed counts of the term's posting of `slot`, or -1 when it has none. */
  find(term: number, slot: number): number {
    const word = this.locate(term, slot);
    return word < 0 ? -1 : this.slabs[Math.floor(word / SLAB_WORDS)][(word % SLAB_WORDS) + 1];
  }

  /** Rewrites the packed counts of the term's posting of `slot`; false when it has none. */
  replace(term: number, slot: number, packed: number): boolean {
    const word = this.locate(term, slot);
    if (word < 0) return false;
    this.slabs[Math.floor(word / SLAB_WORDS)][(word % SLAB_WORDS) + 1] = packed;
    return true;
  }

  /** The highest slot the term has a posting of (removed ones included), -1 when none. */
  lastSlot(term: number): number {
    const block = this.tail[term];
    if (block === NO_BLOCK) return -1;
    const data = this.slabs[block >>> SLAB_BITS];
    const at = block & OFFSET_MASK;
    const count = data[at + 1] & 0xffffff;
    return count === 0 ? -1 : data[at + HEADER + (count - 1) * 2];
  }

  /**
   * Where the term's posting of `slot` is, as a word of all the slabs (slab × its words +
   * offset; the slot's word, its packed counts the next), or -1 when it has none.
   */
  private locate(term: number, slot: number): number {
    for (let block = this.head[term]; block !== NO_BLOCK;) {
      const data = this.slabs[block >>> SLAB_BITS];
      const at = block & OFFSET_MASK;
      const count = data[at + 1] & 0xffffff;
      const first = at + HEADER;
      if (count > 0 && data[first + (count - 1) * 2] >= slot) {
        let low = 0;
        let high = count - 1;
        while (low <= high) {
          const mid = (low + high) >> 1;
          const at2 = data[first + mid * 2];
          if (at2 < slot) low = mid + 1;
          else if (at2 > slot) high = mid - 1;
          else return (block >>> SLAB_BITS) * SLAB_WORDS + first + mid * 2;
        }
        return -1;
      }
      block = data[at];
    }
    return -1;
  }

  /**
   * Keeps only the postings of live slots (`alive[slot]` set), renumbered by `renumber` when
   * given, in a new chain; the old chain's blocks go back to their free lists.
   */
  compact(term: number, alive: Uint8Array, renumber?: Int32Array): void {
    const old = this.head[term];
    this.head[term] = NO_BLOCK;
    this.tail[term] = NO_BLOCK;
    this.sizes[term] = 0;
    this.deadCounts[term] = 0;
    const blocks: number[] = [];
    for (let block = old; block !== NO_BLOCK;) {
      const data = this.slabs[block >>> SLAB_BITS];
      const at = block & OFFSET_MASK;
      blocks.push(block);
      block = data[at];
    }
    // Reading the old chain while the new one is written: its blocks are freed only after.
    for (const block of blocks) {
      const data = this.slabs[block >>> SLAB_BITS];
      const at = block & OFFSET_MASK;
      const end = at + HEADER + (data[at + 1] & 0xffffff) * 2;
      for (let word = at + HEADER; word < end; word += 2) {
        const slot = data[word];
        if (alive[slot]) this.add(term, renumber ? renumber[slot] : slot, data[word + 1]);
      }
    }
    for (const block of blocks) {
      const data = this.slabs[block >>> SLAB_BITS];
      this.free[this.classOf(data, block & OFFSET_MASK)].push(block);
    }
  }

  /** A free block of class `size`, from the free list or cut from the slabs. */
  private allocate(size: number): number {
    const words = HEADER + CAPACITIES[size] * 2;
    let block = this.free[size].pop();
    if (block === undefined) {
      if (this.used + words > SLAB_WORDS) {
        this.slabs.push(new Uint32Array(SLAB_WORDS));
        this.used = 0;
      }
      block = ((this.slabs.length - 1) << SLAB_BITS) | this.used;
      block >>>= 0;
      this.used += words;
    }
    const data = this.slabs[block >>> SLAB_BITS];
    const at = block & OFFSET_MASK;
    data[at] = NO_BLOCK;
    // The class in the top byte of the count word, the count below it.
    data[at + 1] = size << 24;
    return block;
  }

  private classOf(data: Uint32Array, at: number): number {
    return data[at + 1] >>> 24;
  }
}

function grown<T extends Uint32Array | Int32Array>(array: T, length: number, fill: number): T {
  const next = new (array.constructor as new (n: number) => T)(length);
  next.set(array);
  next.fill(fill, array.length);
  return next;
}
