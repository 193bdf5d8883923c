import { VectorTable } from './vector-table';

/** A reproducible pseudo-random sequence in [-0.5, 0.5). */
function randoms(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32 - 0.5;
  };
}

describe('VectorTable', () => {
  // Rows across more than one chunk of products, dimensions not a multiple of four too.
  it.each([
    [64, 20_000, true],
    [7, 1_000, true],
    [3, 17, true],
    [64, 2_000, false],
  ])('scores %i-dimension rows (%i of them, SIMD %s) as a plain dot product does', (d, n, simd) => {
    const random = randoms(d * n);
    const table = new VectorTable(d, { simd });
    expect(table.simd).toBe(simd);
    const rows = Array.from({ length: n }, () => Float32Array.from({ length: d }, random));
    // Written out of order (the odd rows from the last down, then the even ones): the table
    // grows as rows arrive.
    for (let row = n - 1 - (n % 2); row > 0; row -= 2) table.set(row, rows[row]);
    for (let row = 0; row < n; row += 2) table.set(row, rows[row]);
    const query = Float32Array.from({ length: d }, random);

    const seen: number[] = [];
    table.scores(query, n, (row, score) => {
      let want = 0;
      for (let j = 0; j < d; j++) want += query[j] * rows[row][j];
      expect(Math.abs(score - want)).toBeLessThan(1e-5);
      seen.push(row);
    });
    expect(seen).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it('scores a row never written as 0, and rows beyond its room not at all', () => {
    const table = new VectorTable(4);
    table.set(2, Float32Array.of(1, 2, 3, 4));
    const scores = new Map<number, number>();
    table.scores(Float32Array.of(1, 1, 1, 1), 1_000_000, (row, score) => scores.set(row, score));
    expect(scores.get(2)).toBe(10);
    expect(scores.get(0)).toBe(0);
    expect(scores.size).toBe(table.capacity);
  });
});
