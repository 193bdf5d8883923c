export interface WaitOptions {
  /** Give up (and fail, naming what was awaited) after this long; default 20 s. */
  readonly timeoutMs?: number;
  /** Pause between checks; default 25 ms. */
  readonly intervalMs?: number;
  /**
   * Take a check that throws as "not yet" (a database being restarted, a server still
   * starting) instead of failing at once; the last error is named on timeout.
   */
  readonly retryErrors?: boolean;
}

/**
 * Polls `check` until it gives a value other than `undefined` or `false`, and resolves with
 * it; rejects naming `what` when the time is up (a number is the timeout in ms). For states
 * reached in the background (embedding, leases, a process starting), never as a timing
 * assertion. Every polling loop of the tests goes through here.
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  options: number | WaitOptions = {},
): Promise<T> {
  const {
    timeoutMs = 20_000,
    intervalMs = 25,
    retryErrors = false,
  } = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    let value: T | undefined | false;
    try {
      value = await check();
    } catch (error) {
      if (!retryErrors) throw error;
      lastError = error;
      value = undefined;
    }
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      const cause = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
