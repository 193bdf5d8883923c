import { dfOf, frequenciesOf, idfOf, lexicalCoverage, type TermFrequencies } from './term-table';

describe('the term table (document frequencies of a sample)', () => {
  // Records' terms as kept, one per line: `backup` in every document, `pg_dump` in one.
  let table: TermFrequencies;
  beforeAll(async () => {
    table = await frequenciesOf([
      'backup\nnightly\npg_dump',
      'backup\nrestore',
      'backup\nrestore\nverify',
      'backup\nschedule',
      '',
    ]);
  });

  it('counts each term once per document, over every record of the sample', async () => {
    expect(table.documents).toBe(5);
    expect(dfOf(table, 'backup')).toBe(4);
    expect(dfOf(table, 'restore')).toBe(2);
    expect(dfOf(table, 'pg_dump')).toBe(1);
    expect(dfOf(table, 'unheard')).toBe(0);
    expect(dfOf(await frequenciesOf(['a\na\nb']), 'a')).toBe(1);
  });

  it('finds every term of a sample larger than a turn of the event loop', async () => {
    const records = Array.from({ length: 350 }, (_, i) => `common\nterm${i}\nterm${i % 7}x`);
    const large = await frequenciesOf(records);
    expect(large.ids.length).toBe(1 + 350 + 7);
    expect(dfOf(large, 'common')).toBe(350);
    expect(dfOf(large, 'term349')).toBe(1);
    expect(dfOf(large, 'term3x')).toBe(50);
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
