import { Int8Rows } from './int8-rows';

function randomUnit(dimensions: number, seed: number): Float32Array {
  let s = seed;
  const v = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = s / 2 ** 32 - 0.5;
  }
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i], 0);

describe('Int8Rows', () => {
  it.each([384, 768, 100])(
    'scores %i-dimension vectors within 0.02 of their cosine, SIMD and JavaScript alike',
    (dimensions) => {
      const simd = new Int8Rows(dimensions);
      const plain = new Int8Rows(dimensions, { simd: false });
      expect(simd.simd).toBe(true);
      const vectors = Array.from({ length: 3000 }, (_, i) => randomUnit(dimensions, i + 1));
      vectors.forEach((v, row) => {
        simd.set(row, v);
        plain.set(row, v);
      });
      const query = randomUnit(dimensions, 99_999);
      const fromSimd: number[] = [];
      const fromPlain: number[] = [];
      simd.scores(query, vectors.length, (row, score) => (fromSimd[row] = score));
      plain.scores(query, vectors.length, (row, score) => (fromPlain[row] = score));
      expect(fromSimd).toHaveLength(3000);
      for (let row = 0; row < vectors.length; row++) {
        expect(fromSimd[row]).toBeCloseTo(fromPlain[row], 6);
        expect(Math.abs(fromSimd[row] - dot(query, vectors[row]))).toBeLessThan(0.02);
        expect(simd.score(query, row)).toBeCloseTo(fromSimd[row], 6);
      }
    },
  );

  it('takes a quarter of the bytes of float32 vectors', () => {
    const rows = new Int8Rows(384);
    for (let row = 0; row < 10_000; row++) rows.set(row, randomUnit(384, row + 1));
    expect(rows.byteLength).toBeLessThan(10_000 * 1.5 * (384 + 4));
  });
});
