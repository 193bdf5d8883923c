import fc from 'fast-check';
import { readDocTerms, writeDocTerms } from './doc-terms';

describe('a document’s term ids and counts', () => {
  it('read back ascending, each with its count, whatever order they were written in', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 2 ** 31 - 1 }), { maxLength: 300 }),
        fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 300, maxLength: 300 }),
        (ids, counts) => {
          const read: Array<[number, number]> = [];
          readDocTerms(writeDocTerms(ids, counts.slice(0, ids.length)), (id, count) =>
            read.push([id, count]),
          );
          const expected = ids
            .map((id, i): [number, number] => [id, counts[i]])
            .sort((a, b) => a[0] - b[0]);
          expect(read).toEqual(expected);
        },
      ),
    );
  });

  it('take two or three bytes a term when the ids are near one another', () => {
    const ids = Array.from({ length: 100 }, (_, i) => 1000 + i * 3).reverse();
    expect(
      writeDocTerms(
        ids,
        ids.map(() => 1),
      ).length,
    ).toBe(2 + 1 + 99 * 2);
  });
});
