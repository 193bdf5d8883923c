import { backoffDelay } from './backoff';

describe('backoffDelay', () => {
  const exact = () => 0;
  const most = () => 0.999_999;

  it('grows by its factor from the first wait to the cap, and never past it', () => {
    const backoff = { firstMs: 250, maxMs: 2000, jitter: 0 };
    expect([0, 1, 2, 3, 4, 40].map((a) => backoffDelay(a, backoff))).toEqual([
      250, 500, 1000, 2000, 2000, 2000,
    ]);
    expect([0, 1, 2].map((a) => backoffDelay(a, { ...backoff, factor: 3, maxMs: 1e9 }))).toEqual([
      250, 750, 2250,
    ]);
  });

  it('draws the jitter below the wait: a half of it at most with 0.5', () => {
    const backoff = { firstMs: 100, maxMs: 1000, jitter: 0.5 };
    expect(backoffDelay(5, backoff, exact)).toBe(1000);
    expect(backoffDelay(5, backoff, most)).toBe(500);
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelay(2, backoff);
      expect(delay).toBeGreaterThanOrEqual(200);
      expect(delay).toBeLessThanOrEqual(400);
    }
  });

  it('takes a negative attempt as the first', () => {
    expect(backoffDelay(-1, { firstMs: 100, maxMs: 1000, jitter: 0 })).toBe(100);
  });
});
