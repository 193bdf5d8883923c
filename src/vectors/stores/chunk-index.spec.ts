import { ChunkIndex } from './chunk-index';

function unit(values: number[]): Float32Array {
  const v = Float32Array.from(values);
  const n = Math.hypot(...values);
  return v.map((x) => x / n);
}

function randomVector(dimensions: number, seed: number): Float32Array {
  let s = seed;
  const v = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = s / 2 ** 32 - 0.5;
  }
  return unit(Array.from(v));
}

describe('ChunkIndex', () => {
  it('returns the best chunk of each document, best documents first, scored by cosine', () => {
    const index = new ChunkIndex(3);
    index.set({
      documentId: 'a',
      tags: [],
      ancestors: ['a/'],
      chunks: [
        { chunkIndex: 0, vector: unit([1, 0, 0]) },
        { chunkIndex: 1, vector: unit([1, 1, 0]) },
      ],
    });
    index.set({
      documentId: 'b',
      tags: [],
      ancestors: ['b/'],
      chunks: [{ chunkIndex: 0, vector: unit([0, 1, 0]) }],
    });
    const hits = index.search(unit([0, 1, 0]), 10);
    expect(hits.map((h) => [h.documentId, h.chunkIndex])).toEqual([
      ['b', 0],
      ['a', 1],
    ]);
    expect(hits[0].score).toBeCloseTo(1, 6);
    expect(hits[1].score).toBeCloseTo(Math.SQRT1_2, 6);
  });

  it('finds the brute-force cosine top among its candidates, scores within 0.02', () => {
    const dimensions = 64;
    const index = new ChunkIndex(dimensions);
    const vectors = new Map<string, Float32Array>();
    for (let i = 0; i < 3000; i++) {
      const vector = randomVector(dimensions, i + 1);
      vectors.set(`doc-${i}`, vector);
      index.set({
        documentId: `doc-${i}`,
        tags: [],
        ancestors: [],
        chunks: [{ chunkIndex: 0, vector }],
      });
    }
    const query = randomVector(dimensions, 99_999);
    const expected = [...vectors]
      .map(([id, v]) => [id, v.reduce((s, x, i) => s + x * query[i], 0)] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20);
    // Twice as many candidates as wanted, rescored exactly (as the store does): the top 20.
    const hits = index.search(query, 40);
    const exact = (id: string) => vectors.get(id)!.reduce((s, x, i) => s + x * query[i], 0);
    const rescored = hits
      .map((h) => h.documentId)
      .sort((a, b) => exact(b) - exact(a))
      .slice(0, 20);
    expect(rescored).toEqual(expected.map(([id]) => id));
    for (const hit of hits) expect(Math.abs(hit.score - exact(hit.documentId))).toBeLessThan(0.02);
  });

  it('filters exactly, whether it scores only the allowed documents or scans them all', () => {
    const exactTop = (hits: readonly { documentId: string }[], n: number) =>
      hits
        .map((h) => h.documentId)
        .sort((a, b) => exactScore(b) - exactScore(a))
        .slice(0, n);
    const dimensions = 32;
    const index = new ChunkIndex(dimensions);
    const docs = Array.from({ length: 2000 }, (_, i) => ({
      id: `f${i % 2}/d${i}.md`,
      tags: [`t${i % 10}`, 'all'],
      vector: randomVector(dimensions, i + 11),
    }));
    for (const d of docs) {
      index.set({
        documentId: d.id,
        tags: d.tags,
        ancestors: [d.id.split('/')[0] + '/'],
        chunks: [{ chunkIndex: 0, vector: d.vector }],
      });
    }
    const query = randomVector(dimensions, 4242);
    const byId = new Map(docs.map((d) => [d.id, d.vector]));
    const exactScore = (id: string) => byId.get(id)!.reduce((s, x, i) => s + x * query[i], 0);
    const brute = (keep: (d: (typeof docs)[number]) => boolean) =>
      docs
        .filter(keep)
        .map((d) => [d.id, d.vector.reduce((s, x, i) => s + x * query[i], 0)] as const)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 15)
        .map(([id]) => id);
    // One tag in ten: only those documents are scored.
    expect(exactTop(index.search(query, 30, { tags: ['t3'] }), 15)).toEqual(
      brute((d) => d.tags.includes('t3')),
    );
    // Half of them: a full scan with the filter applied.
    expect(exactTop(index.search(query, 30, { folder: 'f1/', tags: ['all'] }), 15)).toEqual(
      brute((d) => d.id.startsWith('f1/')),
    );
    expect(index.search(query, 15, { folder: 'f1/', tags: ['t4'] })).toEqual([]);
  });

  it('filters by folder, by every tag and by readable folders', () => {
    const index = new ChunkIndex(2);
    const add = (id: string, tags: string[], ancestors: string[]) =>
      index.set({
        documentId: id,
        tags,
        ancestors,
        chunks: [{ chunkIndex: 0, vector: unit([1, 0]) }],
      });
    add('k/a.md', ['x', 'y'], ['k/', 'k/a.md/']);
    add('k/b.md', ['x'], ['k/', 'k/b.md/']);
    add('o/c.md', ['x', 'y'], ['o/', 'o/c.md/']);
    const ids = (filter: Parameters<ChunkIndex['search']>[2]) =>
      index
        .search(unit([1, 0]), 10, filter)
        .map((h) => h.documentId)
        .sort();
    expect(ids({ folder: 'k/' })).toEqual(['k/a.md', 'k/b.md']);
    expect(ids({ tags: ['x', 'y'] })).toEqual(['k/a.md', 'o/c.md']);
    expect(ids({ folder: 'k/', tags: ['y'] })).toEqual(['k/a.md']);
    expect(ids({ folder: 'nope/' })).toEqual([]);
    // Readable folders (an access policy's): under any of them, with the other conditions.
    expect(ids({ folders: ['o/', 'nope/'] })).toEqual(['o/c.md']);
    expect(ids({ folders: ['k/', 'o/'], tags: ['y'] })).toEqual(['k/a.md', 'o/c.md']);
    expect(ids({ folders: ['o/'], folder: 'k/' })).toEqual([]);
    expect(ids({ folders: [] })).toEqual([]);
  });

  it('tells which revision and how many chunks it holds for a document', () => {
    const index = new ChunkIndex(2);
    expect(index.versionOf('a')).toBeUndefined();
    index.set({
      documentId: 'a',
      revision: 7,
      tags: [],
      ancestors: [],
      chunks: [
        { chunkIndex: 0, vector: unit([1, 0]) },
        { chunkIndex: 1, vector: unit([0, 1]) },
      ],
    });
    expect(index.versionOf('a')).toEqual({ revision: 7, chunks: 2 });
  });

  it('replaces and removes documents, reusing their slots', () => {
    const index = new ChunkIndex(2);
    const chunks = (n: number, v: number[]) =>
      Array.from({ length: n }, (_, i) => ({ chunkIndex: i, vector: unit(v) }));
    index.set({ documentId: 'a', tags: [], ancestors: [], chunks: chunks(5, [1, 0]) });
    index.set({ documentId: 'a', tags: [], ancestors: [], chunks: chunks(2, [0, 1]) });
    expect(index.chunkCount).toBe(2);
    expect(index.search(unit([1, 0]), 5)[0].score).toBeCloseTo(0, 6);
    index.set({ documentId: 'b', tags: [], ancestors: [], chunks: chunks(3, [1, 0]) });
    expect(index.chunkCount).toBe(5);
    index.remove('a');
    expect(index.documentCount).toBe(1);
    expect(index.search(unit([0, 1]), 5).map((h) => h.documentId)).toEqual(['b']);
    index.set({ documentId: 'b', tags: [], ancestors: [], chunks: [] });
    expect(index.documentCount).toBe(0);
    expect(index.search(unit([1, 0]), 5)).toEqual([]);
  });

  it('keeps vectors as it grows, and scores every slot', () => {
    const index = new ChunkIndex(64);
    for (let i = 0; i < 9000; i++) {
      index.set({
        documentId: `d${i}`,
        tags: [],
        ancestors: [],
        chunks: [{ chunkIndex: 0, vector: randomVector(64, i + 7) }],
      });
    }
    expect(index.chunkCount).toBe(9000);
    for (const i of [0, 1234, 4095, 4096, 8999]) {
      const [best] = index.search(randomVector(64, i + 7), 1);
      expect({ i, id: best.documentId }).toEqual({ i, id: `d${i}` });
      expect(best.score).toBeCloseTo(1, 2);
      // The sparse path (a filter that allows few documents) reads the same blocks.
      index.set({
        documentId: `d${i}`,
        tags: ['picked'],
        ancestors: [],
        chunks: [{ chunkIndex: 0, vector: randomVector(64, i + 7) }],
      });
    }
    const picked = index.search(randomVector(64, 4096 + 7), 5, { tags: ['picked'] });
    expect(picked.map((h) => h.documentId)).toContain('d4096');
    expect(picked[0]).toMatchObject({ documentId: 'd4096' });
    expect(picked[0].score).toBeCloseTo(1, 2);
  });

  it('rejects vectors of the wrong dimension, and finds nothing for a zero query', () => {
    const index = new ChunkIndex(3);
    expect(() =>
      index.set({
        documentId: 'a',
        tags: [],
        ancestors: [],
        chunks: [{ chunkIndex: 0, vector: unit([1, 0]) }],
      }),
    ).toThrow(/2 dimensions for an index of 3/);
    index.set({
      documentId: 'b',
      tags: [],
      ancestors: [],
      chunks: [{ chunkIndex: 0, vector: unit([1, 0, 0]) }],
    });
    expect(index.search(new Float32Array(3), 5)).toEqual([]);
    expect(() => index.search(new Float32Array(2), 5)).toThrow(/dimensions/);
  });
});
