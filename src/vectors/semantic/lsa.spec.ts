import { totalCount } from '../lexical/lexical-index';
import { lexicalRecord } from '../lexical/lexical-record';
import { LsaEmbedding, trainLsa } from './lsa';

const TEXTS = [
  'car engine wheel road engine',
  'automobile engine wheel road garage',
  'car automobile garage engine driver',
  'apple banana fruit tree apple apple',
  'banana pear fruit market',
  'apple pear orchard tree fruit',
];

describe('LsaEmbedding', () => {
  const model = trainLsa(
    TEXTS.map((text) => new Map(text.split(' ').map((word) => [word, 1]))),
    { dimensions: 3, seed: 1 },
  );
  const embedding = new LsaEmbedding(model);

  it('gives a term a record holds only in a passage no weight, not a NaN vector', () => {
    // `road` is in the passage's text but not in the title or the body: its fields count 0.
    const record = lexicalRecord('T', 'car wheel', [{ headings: [], content: 'car wheel road' }]);
    const counts = new Map(record.terms.map((term, i) => [term, totalCount(record.fields[i])]));
    expect(counts.get('road')).toBe(0);

    const vector = embedding.embed(counts);

    expect(Array.from(vector).every(Number.isFinite)).toBe(true);
    expect(Array.from(vector)).toEqual(
      Array.from(
        embedding.embed(
          new Map([
            ['car', 1],
            ['wheel', 1],
          ]),
        ),
      ),
    );
    expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
  });
});
