import {
  decodePostings,
  encodePostings,
  joinTerms,
  lexicalRecord,
  postingAt,
  termIndexOf,
} from './lexical-record';

describe('termIndexOf', () => {
  // Terms inside others, at either end of the text and of a line: each found at its own place.
  const terms = ['ab', 'b', 'bab', 'a', 'abab', 'ba', 'x1', 'x'];
  const text = joinTerms(terms);

  it.each([...terms, 'aba', 'bb', 'x12', '1', 'abab\nba', '', 'y'])(
    'finds %j where the split terms have it',
    (term) => {
      expect(termIndexOf(text, term)).toBe(terms.indexOf(term));
    },
  );

  it('finds nothing in no terms', () => {
    expect(termIndexOf('', 'a')).toBe(-1);
  });
});

describe('postingAt', () => {
  it("reads each term's posting of a record as decodePostings does", () => {
    const record = lexicalRecord(
      'Backups and restores',
      'how backups work: a restore reads the backup',
      [
        { headings: ['Backups'], content: 'how backups work' },
        { headings: ['Restores'], content: 'a restore reads the backup' },
      ],
    );
    const buffer = encodePostings(record);
    const count = record.terms.length;
    const decoded = decodePostings(buffer, count);

    expect(count).toBeGreaterThan(3);
    record.terms.forEach((term, i) => {
      expect(termIndexOf(joinTerms(record.terms), term)).toBe(i);
      expect(postingAt(buffer, count, i)).toEqual({
        fields: decoded.fields[i],
        passage: decoded.passages[i],
      });
    });
  });
});
