import { IndexedLexicalDocument, LexicalIndex, WeightedTerm } from './lexical-index';
import { lexicalRecord } from './lexical-record';
import { PART_BYTES, SnapshotReader, writeSnapshot } from './lexical-snapshot';

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const WORDS = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}x`);

function aDocument(id: string, next: () => number, revision = 1): IndexedLexicalDocument {
  const words = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(WORDS.length * next() ** 2)]).join(' ');
  const passages = Array.from({ length: 1 + Math.floor(next() * 3) }, (_, i) => ({
    headings: [`Part ${i} ${words(2)}`],
    content: words(10 + Math.floor(next() * 60)),
  }));
  const body = passages.map((p) => `## ${p.headings[0]}\n\n${p.content}`).join('\n\n');
  const tags = next() < 0.3 ? ['red'] : next() < 0.5 ? ['blue', 'green'] : [];
  return { documentId: id, revision, tags, ...lexicalRecord(words(3), body, passages) };
}

/** An index that has seen documents set, replaced and removed (removed slots included). */
function churnedIndex(documents: number, seed = 7): LexicalIndex {
  const next = random(seed);
  const index = new LexicalIndex();
  for (let i = 0; i < documents; i++) index.set(aDocument(`f${i % 5}/d${i}.md`, next));
  for (let i = 0; i < documents; i += 3) index.set(aDocument(`f${i % 5}/d${i}.md`, next, 2));
  for (let i = 1; i < documents; i += 7) index.remove(`f${i % 5}/d${i}.md`);
  return index;
}

/** Writes the index's snapshot and reads it back, part by part, as copies. */
function roundTrip(index: LexicalIndex): Promise<LexicalIndex> {
  const writing = writeSnapshot(index.state());
  const reader = new SnapshotReader(JSON.parse(JSON.stringify(writing.layout)));
  let parts = 0;
  for (const part of writing.parts()) {
    expect(part.length).toBeLessThanOrEqual(PART_BYTES);
    reader.accept(Buffer.from(part));
    parts++;
  }
  expect(parts).toBe(reader.parts);
  return LexicalIndex.restore(reader.state());
}

const QUERIES: WeightedTerm[][] = [
  [{ term: 'w0x', weight: 1 }],
  [
    { term: 'w1x', weight: 1 },
    { term: 'w5x', weight: 1 },
    { term: 'w2sx', weight: 0.3 },
  ],
  WORDS.slice(20, 40).map((term) => ({ term, weight: 1 })),
];

describe('lexical snapshot', () => {
  it('reads back an index that ranks every query as the original does', async () => {
    const index = churnedIndex(900);
    const restored = await roundTrip(index);
    expect(restored.documentCount).toBe(index.documentCount);
    expect(restored.postings).toBe(index.postings);
    expect(restored.termCount).toBe(index.termCount);
    for (const query of QUERIES) {
      expect(restored.search(query, 20)).toEqual(index.search(query, 20));
      expect(restored.search(query, 10, { folder: 'f2/' })).toEqual(
        index.search(query, 10, { folder: 'f2/' }),
      );
      expect(restored.search(query, 10, { tags: ['blue'], folders: ['f1/', 'f3/'] })).toEqual(
        index.search(query, 10, { tags: ['blue'], folders: ['f1/', 'f3/'] }),
      );
    }
    expect(restored.termCountsOf('f3/d3.md')).toEqual(index.termCountsOf('f3/d3.md'));
    expect(restored.versionOf('f0/d0.md')).toBe(2);
    expect(restored.versionOf('f1/d1.md')).toBeUndefined();
  });

  it('gives an index that takes further writes as the original does', async () => {
    const index = churnedIndex(300);
    const restored = await roundTrip(index);
    const next = random(99);
    const later = Array.from({ length: 200 }, (_, i) => aDocument(`g/d${i}.md`, next));
    for (const target of [index, restored]) {
      for (const document of later) target.set(document);
      for (let i = 0; i < 300; i += 2) target.remove(`f${i % 5}/d${i}.md`);
    }
    for (const query of QUERIES) {
      expect(restored.search(query, 25)).toEqual(index.search(query, 25));
    }
    expect(restored.documentCount).toBe(index.documentCount);
  });

  it('holds an empty index', async () => {
    const restored = await roundTrip(new LexicalIndex());
    expect(restored.documentCount).toBe(0);
    restored.set(aDocument('a.md', random(1)));
    expect(restored.search(QUERIES[0], 5).length).toBeLessThanOrEqual(1);
  });

  it('refuses parts that do not fit the layout', async () => {
    const writing = writeSnapshot(churnedIndex(200).state());
    const parts = [...writing.parts()].map((part) => Buffer.from(part));
    const readAll = async (layout: unknown, given: Buffer[]) => {
      const reader = new SnapshotReader(layout as typeof writing.layout);
      for (const part of given) reader.accept(part);
      return LexicalIndex.restore(reader.state());
    };
    await expect(readAll(writing.layout, parts)).resolves.toBeDefined();
    await expect(readAll(writing.layout, parts.slice(0, -1))).rejects.toThrow(/missing/);
    await expect(readAll(writing.layout, [...parts, parts[0]])).rejects.toThrow(/beyond/);
    await expect(readAll({ ...writing.layout, format: 0 }, parts)).rejects.toThrow(/format/);
    const short = parts.map((part, i) => (i === 1 ? part.subarray(1) : part));
    await expect(readAll(writing.layout, short)).rejects.toThrow();
  });
});
