import { dfOf, frequenciesOf, idfOf, lexicalCoverage } from './term-table';

describe('the term table (document frequencies of a sample)', () => {
  // Each term's count in a sample of five: `backup` in four documents, `pg_dump` in one.
  const table = frequenciesOf(5, [
    { term: 'backup', df: 4 },
    { term: 'nightly', df: 1 },
    { term: 'pg_dump', df: 1 },
    { term: 'restore', df: 2 },
    { term: 'verify', df: 1 },
    { term: 'schedule', df: 1 },
  ]);

  it("finds each term's count by its id, and 0 for a term the sample does not hold", () => {
    expect(table.documents).toBe(5);
    expect(dfOf(table, 'backup')).toBe(4);
    expect(dfOf(table, 'restore')).toBe(2);
    expect(dfOf(table, 'pg_dump')).toBe(1);
    expect(dfOf(table, 'unheard')).toBe(0);
    const many = frequenciesOf(
      350,
      Array.from({ length: 1000 }, (_, i) => ({ term: `term${i}`, df: (i % 350) + 1 })),
    );
    expect(dfOf(many, 'term0')).toBe(1);
    expect(dfOf(many, 'term349')).toBe(350);
    expect(dfOf(many, 'term999')).toBe(300);
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
