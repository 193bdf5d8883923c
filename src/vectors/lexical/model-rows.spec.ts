import { LexicalIndex } from './lexical-index';
import { lexicalRecord } from './lexical-record';
import { LsaEmbedding, trainLsa } from '../semantic/lsa';
import { ModelRows } from './model-rows';

const TEXTS = [
  'car engine wheel road engine',
  'automobile engine wheel road garage',
  'car automobile garage engine driver',
  'apple banana fruit tree apple apple',
  'banana pear fruit market',
  'apple pear orchard tree fruit',
];

function indexOf(texts: readonly string[]): LexicalIndex {
  const index = new LexicalIndex();
  texts.forEach((text, i) =>
    index.set({
      documentId: `d${i}.md`,
      revision: 1,
      tags: [],
      ...lexicalRecord(`Title ${i}`, text, [{ headings: [], content: text }]),
    }),
  );
  return index;
}

describe('ModelRows', () => {
  it('gives each document the vector embed gives its term counts, to the bit', () => {
    const index = indexOf(TEXTS);
    const ids = TEXTS.map((_, i) => `d${i}.md`);
    const model = trainLsa(
      ids.map((id) => index.termCountsOf(id)!),
      { dimensions: 3, seed: 1 },
    );
    const embedding = new LsaEmbedding(model);
    const rows = new ModelRows(index, embedding);
    // A term the index learns after the rows were read is looked up by its name.
    index.set({
      documentId: 'late.md',
      revision: 1,
      tags: [],
      ...lexicalRecord('Late', 'orchard zeppelin market', [{ headings: [], content: 'x' }]),
    });
    let placed = 0;
    for (const id of [...ids, 'late.md']) {
      const expected = embedding.embed(index.termCountsOf(id)!);
      if (expected.some((x) => x !== 0)) placed++;
      expect(Array.from(rows.vectorOf(id)!)).toEqual(Array.from(expected));
    }
    expect(placed).toBeGreaterThanOrEqual(5);
    expect(rows.vectorOf('absent.md')).toBeUndefined();
  });
});
