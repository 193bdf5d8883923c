import { LexicalIndex } from './lexical-index';
import { anchorCount, packPosting } from './posting-store';
import {
  anchorFieldOf,
  decodePostings,
  encodePostings,
  joinTerms,
  lexicalRecord,
  postingAt,
  termIndexOf,
  withAnchorField,
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

describe('the anchor field', () => {
  const record = lexicalRecord('Quasar', 'Serves the telemetry feed.', [
    { headings: ['Quasar'], content: 'Serves the telemetry feed.' },
  ]);

  it('counts the words of link texts, sorted, and their length without stop words', () => {
    expect(anchorFieldOf(['the telemetry daemon', 'Telemetry'])).toEqual({
      terms: ['daemon', 'telemetri', 'the'],
      counts: [1, 2, 1],
      length: 3,
    });
  });

  it('adds its counts to a record: a word of the document keeps its own counts, a new one is held', () => {
    const merged = withAnchorField(record, anchorFieldOf(['the telemetry daemon']));
    const at = (term: string) => merged.terms.indexOf(term);
    expect(merged.terms.slice(0, record.terms.length)).toEqual(record.terms);
    expect(merged.lengths).toEqual([...record.lengths.slice(0, 3), 2]);
    const telemetry = at('telemetri');
    expect(merged.fields[telemetry]).toBe(record.fields[telemetry]);
    expect(merged.passages[telemetry] & 0x0fffffff).toBe(record.passages[telemetry]);
    expect(anchorCount(packPosting(merged.fields[telemetry], merged.passages[telemetry]))).toBe(1);
    const daemon = at('daemon');
    expect(daemon).toBeGreaterThanOrEqual(record.terms.length);
    expect(merged.fields[daemon]).toBe(0);
    expect(anchorCount(packPosting(0, merged.passages[daemon]))).toBe(1);
    // No links: the record itself.
    expect(withAnchorField(record, anchorFieldOf([]))).toBe(record);
  });

  it('finds its terms in the record alike, whether it has a few terms or many', () => {
    for (const texts of [['the telemetry daemon'], [record.terms.join(' ') + ' daemon quokka']]) {
      const field = anchorFieldOf(texts);
      const merged = withAnchorField(record, field);
      expect(merged.terms.slice(0, record.terms.length)).toEqual(record.terms);
      expect(merged.terms.slice(record.terms.length)).toEqual(
        field.terms.filter((term) => !record.terms.includes(term)),
      );
      field.terms.forEach((term, k) => {
        const i = merged.terms.indexOf(term);
        expect(anchorCount(packPosting(merged.fields[i], merged.passages[i]))).toBe(
          Math.min(field.counts[k], 3),
        );
      });
    }
  });

  it('ranks a document named by the links to it, and keeps its words its own', () => {
    const index = new LexicalIndex();
    const other = lexicalRecord('Pulsar', 'A queue for the telemetry feed, and a daemon.', [
      { headings: ['Pulsar'], content: 'A queue for the telemetry feed, and a daemon.' },
    ]);
    index.set({ ...other, documentId: 'pulsar', revision: 1, tags: [] });
    index.set({
      ...withAnchorField(record, anchorFieldOf(['the zorbulator daemon'])),
      documentId: 'quasar',
      revision: 1,
      tags: [],
    });
    const ids = (term: string) =>
      index.search([{ term, weight: 1 }], 10).map((match) => match.documentId);
    expect(ids('zorbul')).toEqual(['quasar']);
    // The links say "daemon" of quasar; pulsar's body says it once: the links weigh more.
    expect(ids('daemon')).toEqual(['quasar', 'pulsar']);
    expect(index.averages.anchor).toBe(1);
    expect(index.termCountsOf('quasar')!.get('zorbul')).toBe(0);
  });
});
