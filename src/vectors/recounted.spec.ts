import { Recounted } from './recounted';

/**
 * A figure on a clock of its own: each count of `documents` documents takes `took` ms of it
 * and returns 1, 2, 3…
 */
function aFigure(took: number, documents = 1_000_000) {
  const clock = { now: 1_000_000 };
  let counts = 0;
  const figure = new Recounted(
    async () => {
      await Promise.resolve();
      clock.now += took;
      return ++counts;
    },
    () => documents,
    () => clock.now,
  );
  return { figure, clock, counts: () => counts };
}

describe('Recounted', () => {
  it('counts for every answer below 50 000 documents, however long a count took', async () => {
    const { figure, clock } = aFigure(5_000, 49_999);
    expect((await figure.read()).value).toBe(1);
    expect((await figure.read()).value).toBe(2);
    clock.now += 1;
    expect(await figure.read()).toEqual({ value: 3, countedAt: clock.now - 5_000 });
  });

  it('answers with the last count, and counts again in the background once it is 20 times as old as it took', async () => {
    const { figure, clock, counts } = aFigure(100);
    const first = await figure.read();
    expect(first.value).toBe(1);
    clock.now = first.countedAt + 1_999;
    expect(await figure.read()).toBe(first);
    expect(counts()).toBe(1);
    clock.now = first.countedAt + 2_000;
    expect(await figure.read()).toBe(first);
    await new Promise((resolve) => setImmediate(resolve));
    expect(counts()).toBe(2);
    expect(await figure.read()).toEqual({ value: 2, countedAt: first.countedAt + 2_000 });
  });

  it('waits for a new count when the last one is twice as old as it may be given', async () => {
    const { figure, clock, counts } = aFigure(100);
    const first = await figure.read();
    clock.now = first.countedAt + 3_999;
    expect(await figure.read()).toBe(first);
    await new Promise((resolve) => setImmediate(resolve));
    clock.now = first.countedAt + 60_000;
    expect(await figure.read()).toEqual({ value: 3, countedAt: first.countedAt + 60_000 });
    expect(counts()).toBe(3);
  });

  it('counts again once the last count is 30 s old, however long it took', async () => {
    const { figure, clock, counts } = aFigure(10_000);
    const first = await figure.read();
    clock.now = first.countedAt + 29_999;
    await figure.read();
    await new Promise((resolve) => setImmediate(resolve));
    expect(counts()).toBe(1);
    clock.now = first.countedAt + 30_000;
    await figure.read();
    await new Promise((resolve) => setImmediate(resolve));
    expect(counts()).toBe(2);
  });

  it('gives callers arriving during a count that count, and keeps no failed one', async () => {
    const { figure, counts } = aFigure(60);
    const [a, b] = await Promise.all([figure.read(), figure.read()]);
    expect(a).toBe(b);
    expect(counts()).toBe(1);

    let fail = true;
    const clock = { now: 0 };
    const failing = new Recounted(
      async () => {
        await Promise.resolve();
        clock.now += 100;
        if (fail) throw new Error('PostgreSQL is down');
        return 'counted';
      },
      () => 1_000_000,
      () => clock.now,
    );
    await expect(failing.read()).rejects.toThrow('PostgreSQL is down');
    fail = false;
    const counted = await failing.read();
    expect(counted).toEqual({ value: 'counted', countedAt: 100 });
    // A failed count in the background leaves the last one.
    fail = true;
    clock.now = 3_000;
    expect(await failing.read()).toBe(counted);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await failing.read()).toBe(counted);
  });
});
