import { wireVector } from './wire-vector';

describe('wireVector', () => {
  it('keeps every component within 5e-8 and prints it in at most seven decimals', () => {
    let seed = 7;
    const next = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
    const vector = Float32Array.from({ length: 768 }, () => next() / 20);
    vector[0] = 0;
    vector[1] = -1;
    vector[2] = 1e-9;
    const written = wireVector(vector);
    expect(written).toHaveLength(768);
    for (let i = 0; i < vector.length; i++) {
      expect(Math.abs(written[i] - vector[i])).toBeLessThanOrEqual(5e-8 + 1e-15);
      expect(JSON.stringify(written[i])).toMatch(/^-?\d(\.\d{1,7})?$/);
    }
    expect(written.slice(0, 3)).toEqual([0, -1, 0]);
  });

  it('halves the JSON of a unit vector of 768 dimensions', () => {
    const vector = Float32Array.from({ length: 768 }, (_, i) => Math.sin(i + 1));
    const norm = Math.hypot(...vector);
    for (let i = 0; i < vector.length; i++) vector[i] /= norm;
    const full = JSON.stringify(Array.from(vector)).length;
    expect(JSON.stringify(wireVector(vector)).length).toBeLessThan(full * 0.6);
  });
});
