import { debounce } from './debounce';

describe('debounce', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const timing = { quietMs: 500, intervalMs: 5_000 };

  it('calls once, the quiet time after the last of a few triggers', () => {
    const call = jest.fn();
    const debounced = debounce(call, timing);
    debounced.trigger();
    jest.advanceTimersByTime(300);
    debounced.trigger();
    jest.advanceTimersByTime(499);
    expect(call).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(call).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(60_000);
    expect(call).toHaveBeenCalledTimes(1);
  });

  it('calls every interval through a storm that never quiets down', () => {
    const call = jest.fn();
    const debounced = debounce(call, timing);
    // A trigger every 100 ms for 20 s.
    for (let elapsed = 0; elapsed < 20_000; elapsed += 100) {
      debounced.trigger();
      jest.advanceTimersByTime(100);
    }
    expect(call).toHaveBeenCalledTimes(4); // at 5, 10, 15 and 20 s
    jest.advanceTimersByTime(5_000);
    expect(call).toHaveBeenCalledTimes(4); // the last trigger (19.9 s) was answered at 20 s
  });

  it('keeps the interval between two calls, however quiet the time between', () => {
    const call = jest.fn();
    const debounced = debounce(call, timing);
    debounced.trigger();
    jest.advanceTimersByTime(500);
    expect(call).toHaveBeenCalledTimes(1);
    debounced.trigger(); // at 0.5 s: not before 5.5 s
    jest.advanceTimersByTime(4_999);
    expect(call).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1);
    expect(call).toHaveBeenCalledTimes(2);
    jest.advanceTimersByTime(10_000);
    debounced.trigger(); // long after: the quiet time only
    jest.advanceTimersByTime(500);
    expect(call).toHaveBeenCalledTimes(3);
  });

  it('forgets a pending call when cancelled', () => {
    const call = jest.fn();
    const debounced = debounce(call, timing);
    debounced.trigger();
    debounced.cancel();
    jest.advanceTimersByTime(60_000);
    expect(call).not.toHaveBeenCalled();
    expect(jest.getTimerCount()).toBe(0);
  });
});
