import { frequenciesOf, idfOf, lexicalCoverage } from './term-table';

describe('the term table (document frequencies of a sample)', () => {
  // Records' terms as kept, one per line: `backup` in every document, `pg_dump` in one.
  const table = frequenciesOf([
    'backup\nnightly\npg_dump',
    'backup\nrestore',
    'backup\nrestore\nverify',
    'backup\nschedule',
    '',
  ]);

  it('counts each term once per document, over every record of the sample', () => {
    expect(table.documents).toBe(5);
    expect(table.df.get('backup')).toBe(4);
    expect(table.df.get('restore')).toBe(2);
    expect(frequenciesOf(['a\na\nb']).df.get('a')).toBe(1);
  });

  it('weighs a rare term above a common one, and one no document holds above both', () => {
    expect(idfOf(table, 'pg_dump')).toBeGreaterThan(idfOf(table, 'restore'));
    expect(idfOf(table, 'restore')).toBeGreaterThan(idfOf(table, 'backup'));
    expect(idfOf(table, 'unheard')).toBeGreaterThan(idfOf(table, 'pg_dump'));
    expect(idfOf(table, 'backup')).toBeGreaterThan(0);
  });

  it("gives the share of the query's terms the first document holds, weighed by their rarity", () => {
    const terms = ['backup', 'pg_dump'];
    const rare = lexicalCoverage(table, { terms, held: new Set(['pg_dump']) });
    const common = lexicalCoverage(table, { terms, held: new Set(['backup']) });
    // The same one term of two, but the rare one covers most of the query, the common one little.
    expect(rare).toBeGreaterThan(0.5);
    expect(common).toBeLessThan(0.5);
    expect(rare + common).toBeCloseTo(1, 12);
    expect(lexicalCoverage(table, { terms, held: new Set(terms) })).toBe(1);
    expect(lexicalCoverage(table, { terms, held: new Set() })).toBe(0);
    expect(lexicalCoverage(table, { terms: [], held: new Set() })).toBe(0);
  });
});
