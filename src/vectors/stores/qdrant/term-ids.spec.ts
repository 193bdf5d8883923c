import { termId } from './term-ids';

describe('termId', () => {
  // Reference values from the `mmh3` Python package (mmh3.hash(bytes, 0, signed=False)).
  it.each([
    ['', 0],
    ['a', 1009084850],
    ['hello', 613153351],
    ['postgres', 4081189063],
    ['straße', 2095602437],
    ['東京', 2529104194],
    ['err_lease_lost_42', 2456589042],
    ['x'.repeat(70), 1895385795],
  ])('is MurmurHash3 x86 32 of the UTF-8 bytes: %j', (term, id) => {
    expect(termId(term)).toBe(id);
  });

  it('is an unsigned 32-bit integer, the same every time', () => {
    for (const term of ['alpha', 'Ωmega', '🙂', 'a'.repeat(1000)]) {
      const id = termId(term);
      expect(Number.isInteger(id)).toBe(true);
      expect(id).toBeGreaterThanOrEqual(0);
      expect(id).toBeLessThan(2 ** 32);
      expect(termId(term)).toBe(id);
    }
  });
});
