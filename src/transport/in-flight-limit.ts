/** Requests answered at once; more wait in line. */
const MAX_IN_FLIGHT = 16;
/** Requests waiting in line beyond which the input is no longer read (backpressure). */
const MAX_WAITING = 64;

/**
 * The bound on the requests of one stdio session that run at once: past
 * {@link MAX_IN_FLIGHT} they wait in line, and past {@link MAX_WAITING} waiting the
 * session stops reading its input (`backpressure(true)`) until the line shortens.
 */
export class InFlightLimit {
  private readonly waiting: Array<() => void> = [];
  private inFlight = 0;

  /** `backpressure(true)` asks to stop reading the input, `false` to resume. */
  constructor(private readonly backpressure?: (paused: boolean) => void) {}

  /** Runs `work` when fewer than {@link MAX_IN_FLIGHT} requests are running. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.inFlight >= MAX_IN_FLIGHT) {
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        if (this.waiting.length === MAX_WAITING) this.backpressure?.(true);
      });
    }
    this.inFlight++;
    try {
      return await work();
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
      if (this.waiting.length === MAX_WAITING - 1) this.backpressure?.(false);
    }
  }
}
