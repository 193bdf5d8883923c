import {
  anchorCount,
  bodyCount,
  headingsCount,
  packPosting,
  passageCount,
  passageIndex,
  PostingStore,
  titleCount,
} from './posting-store';

/** Every posting of a term as [slot, packed]. */
function postingsOf(store: PostingStore, term: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  store.forEachBlock(term, (data, from, to) => {
    for (let i = from; i < to; i += 2) out.push([data[i], data[i + 1]]);
  });
  return out;
}

describe('PostingStore', () => {
  it('keeps each term’s postings in slot order across blocks of growing size', () => {
    const store = new PostingStore();
    const a = store.addTerm();
    const b = store.addTerm();
    for (let slot = 0; slot < 5000; slot++) {
      store.add(a, slot, slot);
      if (slot % 7 === 0) store.add(b, slot, slot + 1);
    }
    expect(postingsOf(store, a)).toEqual(Array.from({ length: 5000 }, (_, s) => [s, s]));
    expect(postingsOf(store, b)).toHaveLength(715);
    expect(store.size(a)).toBe(5000);
    expect(store.find(a, 4321)).toBe(4321);
    expect(store.find(b, 14)).toBe(15);
    expect(store.find(b, 15)).toBe(-1);
    expect(store.find(b, 99999)).toBe(-1);
  });

  it('a rare term costs one small block, not a slab of its own', () => {
    const store = new PostingStore();
    for (let t = 0; t < 100_000; t++) store.add(store.addTerm(), t, 1);
    // 100 000 blocks of 2 postings (6 words): under 3 MB in 4 MiB slabs.
    expect(store.bytes).toBeLessThanOrEqual(4 * 1024 * 1024);
  });

  it('compacts a chain to the live slots, renumbered, reusing the blocks it frees', () => {
    const store = new PostingStore();
    const t = store.addTerm();
    for (let slot = 0; slot < 3000; slot++) store.add(t, slot, slot * 2);
    const alive = new Uint8Array(3000).map((_, slot) => (slot % 3 === 0 ? 1 : 0));
    const renumber = new Int32Array(3000).map((_, slot) => Math.floor(slot / 3));
    for (let slot = 0; slot < 3000; slot++) if (!alive[slot]) store.markDead(t);
    expect(store.live(t)).toBe(1000);
    const before = store.bytes;
    store.compact(t, alive, renumber);
    expect(postingsOf(store, t)).toEqual(Array.from({ length: 1000 }, (_, s) => [s, s * 6]));
    expect(store.live(t)).toBe(1000);
    expect(store.dead(t)).toBe(0);
    // A second term of the same size is cut from the freed blocks: no new slab.
    const u = store.addTerm();
    for (let slot = 0; slot < 3000; slot++) store.add(u, slot, 1);
    expect(store.bytes).toBe(before);
  });

  it('packs the counts of a posting in one word, capped at their widths', () => {
    const fields = 3 | (2 << 8) | (40 << 16);
    const passage = 7 | (5 << 16) | (2 << 28);
    const packed = packPosting(fields, passage);
    const counts = (p: number) => [
      titleCount(p),
      headingsCount(p),
      bodyCount(p),
      anchorCount(p),
      passageIndex(p),
      passageCount(p),
    ];
    expect(counts(packed)).toEqual([3, 2, 40, 2, 7, 5]);
    const big = packPosting(200 | (200 << 8) | (60000 << 16), 9000 | (300 << 16) | (15 << 28));
    expect(counts(big)).toEqual([7, 15, 255, 3, 2047, 15]);
    expect(big).toBeGreaterThan(0);
    // Each count in its own bits: the largest of one leaves the others at 0.
    expect(counts(packPosting(0, 15 << 28))).toEqual([0, 0, 0, 3, 0, 0]);
    expect(counts(packPosting(0, 0xfff << 16))).toEqual([0, 0, 0, 0, 0, 15]);
    expect(counts(packPosting(0xff, 0))).toEqual([7, 0, 0, 0, 0, 0]);
  });
});
