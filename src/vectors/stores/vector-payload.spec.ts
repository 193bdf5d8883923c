import {
  ancestorsOf,
  decodeVector,
  encodeVector,
  encodeVectors,
  folderOf,
  pointId,
} from './vector-payload';

describe('vector payload', () => {
  it('lists every folder of an id, and the id itself as a folder', () => {
    expect(ancestorsOf('a/b/c.md')).toEqual(['a/', 'a/b/', 'a/b/c.md/']);
    expect(ancestorsOf('top.md')).toEqual(['top.md/']);
  });

  it('reads a search prefix as whole segments, with or without the trailing slash', () => {
    expect(folderOf('a/b')).toBe('a/b/');
    expect(folderOf('a/b/')).toBe('a/b/');
    expect(folderOf('a/b//')).toBe('a/b/');
    expect(folderOf('')).toBeUndefined();
    expect(folderOf(undefined)).toBeUndefined();
    expect(ancestorsOf('a/b/c.md')).toContain(folderOf('a/b'));
    expect(ancestorsOf('a/bc/d.md')).not.toContain(folderOf('a/b'));
  });

  it('derives a stable UUID per document and chunk', () => {
    const id = pointId('a/b.md', 0);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pointId('a/b.md', 0)).toBe(id);
    expect(pointId('a/b.md', 1)).not.toBe(id);
    expect(pointId('a/b.md0', 0)).not.toBe(pointId('a/b.md', 0));
  });

  it('round-trips vectors through float32 little-endian bytes', () => {
    const vector = Float32Array.from([0.5, -1.25, 3e-8, 0]);
    const bytes = encodeVector(vector);
    expect(bytes).toHaveLength(16);
    expect(bytes.readFloatLE(4)).toBe(-1.25);
    // Decoding works from an unaligned view too (pg hands out slices of larger buffers).
    const unaligned = Buffer.concat([Buffer.from([9]), bytes]).subarray(1);
    expect(Array.from(decodeVector(unaligned))).toEqual(Array.from(vector));
  });

  it('lays several vectors end to end, views of one buffer or not', () => {
    const shared = Float32Array.from([1, 2, 3, 4, 5, 6]);
    const vectors = [shared.subarray(2, 4), Float32Array.from([-7, 8.5]), shared.subarray(0, 2)];
    const bytes = encodeVectors(vectors);
    expect(bytes).toEqual(Buffer.concat(vectors.map(encodeVector)));
    expect(Array.from(decodeVector(bytes))).toEqual([3, 4, -7, 8.5, 1, 2]);
  });
});
