import { HostPacer } from './host-pacer';

describe('HostPacer', () => {
  const signal = new AbortController().signal;

  // Timers count whole milliseconds from the event loop's clock, read when its turn began: a
  // sleep of the time left can end up to a millisecond before it has passed.
  it('runs one request at a time per host, each the interval after the one before', async () => {
    const pacer = new HostPacer(20);
    const spans: Array<[number, number]> = [];
    await Promise.all(
      [0, 1, 2, 3, 4, 5].map(() =>
        pacer.run('site.test', signal, async () => {
          const start = performance.now();
          await new Promise((resolve) => setTimeout(resolve, 5));
          spans.push([start, performance.now()]);
        }),
      ),
    );
    for (let i = 1; i < spans.length; i++) {
      expect(spans[i][0] - spans[i - 1][1]).toBeGreaterThanOrEqual(20);
    }
  });

  it('stops waiting when the run is cancelled, with its reason', async () => {
    const pacer = new HostPacer(60_000);
    await pacer.run('site.test', signal, async () => undefined);
    const cancel = new AbortController();
    const asked = jest.fn();
    const waiting = pacer.run('site.test', cancel.signal, async () => asked());
    setTimeout(() => cancel.abort(new Error('the source was removed')), 10);
    await expect(waiting).rejects.toThrow('the source was removed');
    expect(asked).not.toHaveBeenCalled();
  });
});
