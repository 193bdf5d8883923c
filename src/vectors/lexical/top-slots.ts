/**
 * The best `limit` of the touched slots by score, best first, ties by document id: a min-heap
 * of the best so far, so a search that touches 10⁵ documents sorts only `limit` of them.
 */
export function topSlots(
  touched: Int32Array,
  scores: Float64Array,
  ids: ReadonlyArray<string | undefined>,
  limit: number,
): number[] {
  // Scores rounded to 1e-9 so that ties are ties whatever the order terms were summed in.
  const rounded = (slot: number) => Math.round(scores[slot] * 1e9) / 1e9;
  const better = (a: number, b: number) =>
    rounded(a) !== rounded(b) ? rounded(a) > rounded(b) : ids[a]! < ids[b]!;
  // A min-heap of the best `limit` so far (its root the worst of them).
  const heap: number[] = [];
  const sift = (at: number) => {
    for (;;) {
      const l = at * 2 + 1;
      const r = l + 1;
      let worst = at;
      if (l < heap.length && better(heap[worst], heap[l])) worst = l;
      if (r < heap.length && better(heap[worst], heap[r])) worst = r;
      if (worst === at) return;
      [heap[at], heap[worst]] = [heap[worst], heap[at]];
      at = worst;
    }
  };
  for (const slot of touched) {
    // Far below the worst kept: not a candidate (the rounding cannot make it one).
    if (heap.length === limit && scores[slot] < scores[heap[0]] - 1e-6) continue;
    if (heap.length < limit) {
      heap.push(slot);
      for (let at = heap.length - 1; at > 0;) {
        const parent = (at - 1) >> 1;
        if (!better(heap[parent], heap[at])) break;
        [heap[parent], heap[at]] = [heap[at], heap[parent]];
        at = parent;
      }
    } else if (better(slot, heap[0])) {
      heap[0] = slot;
      sift(0);
    }
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : 1));
}
