import { setTimeout as sleep } from 'node:timers/promises';

interface HostState {
  /** Settles when the host's current request is done: the next one waits for it. */
  tail: Promise<void>;
  /** The earliest time (ms, `performance.now()`) the next request may start. */
  nextAt: number;
  intervalMs: number;
}

/**
 * Politeness towards the sites a source reads: one request at a time per host, each one
 * starting at least the host's interval (the default, or a longer `Crawl-delay`) after the
 * previous one ended, so that the site sees no two requests closer than that whatever the
 * time connections take; and a host that asked to be left alone (`Retry-After`) is not
 * asked again before then.
 */
export class HostPacer {
  private readonly hosts = new Map<string, HostState>();

  constructor(private readonly defaultIntervalMs: number) {}

  /** Raises a host's interval (robots.txt's `Crawl-delay`); never lowers it below the default. */
  slowDown(host: string, intervalMs: number): void {
    const state = this.state(host);
    state.intervalMs = Math.max(state.intervalMs, intervalMs);
  }

  /** No request to `host` starts before `delayMs` from now (a `Retry-After`, a backoff). */
  holdFor(host: string, delayMs: number): void {
    const state = this.state(host);
    state.nextAt = Math.max(state.nextAt, performance.now() + delayMs);
  }

  /**
   * Runs `task` (one request to `host`) once the host's previous request is done and its
   * interval has passed. Throws `signal`'s reason if it aborts while waiting.
   */
  async run<T>(host: string, signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    const state = this.state(host);
    const previous = state.tail;
    let release!: () => void;
    state.tail = new Promise((resolve) => (release = resolve));
    try {
      await previous;
      // Timers count whole milliseconds from the event loop's clock, read when its turn began:
      // a sleep of the time left can end up to a millisecond early, so the time is read again.
      for (let wait = state.nextAt - performance.now(); wait > 0;) {
        await sleep(Math.ceil(wait), undefined, { signal }).catch(() => signal.throwIfAborted());
        wait = state.nextAt - performance.now();
      }
      signal.throwIfAborted();
      return await task();
    } finally {
      state.nextAt = Math.max(state.nextAt, performance.now() + state.intervalMs);
      release();
    }
  }

  private state(host: string): HostState {
    let state = this.hosts.get(host);
    if (!state) {
      state = { tail: Promise.resolve(), nextAt: 0, intervalMs: this.defaultIntervalMs };
      this.hosts.set(host, state);
    }
    return state;
  }
}
