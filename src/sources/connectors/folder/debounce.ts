/** When a storm of triggers becomes calls (see {@link debounce}). */
export interface DebounceTiming {
  /** The quiet time after the last trigger before the call, in ms. */
  readonly quietMs: number;
  /**
   * In ms, both the longest wait for a call once triggered (a storm that never quiets down
   * still gets a call this often) and the shortest time between two calls.
   */
  readonly intervalMs: number;
}

/** A folder's changes: synced half a second after the last, at most every five seconds. */
export const WATCH_TIMING: DebounceTiming = { quietMs: 500, intervalMs: 5_000 };

export interface Debounced {
  trigger(): void;
  /** Forgets a pending call (when the watch stops). */
  cancel(): void;
}

/**
 * `call` once `quietMs` after the last trigger, but no later than `intervalMs` after the first
 * trigger it answers, and never sooner than `intervalMs` after the previous call: one edit is
 * synced at once, a burst of a thousand files once, a folder that never stops changing every
 * `intervalMs`.
 */
export function debounce(call: () => void, timing: DebounceTiming): Debounced {
  let timer: NodeJS.Timeout | null = null;
  let firstAt = 0;
  let lastAt = 0;
  let calledAt = Number.NEGATIVE_INFINITY;
  const fire = () => {
    timer = null;
    calledAt = Date.now();
    call();
  };
  return {
    trigger() {
      const now = Date.now();
      if (timer === null) firstAt = now;
      else clearTimeout(timer);
      lastAt = now;
      const at = Math.max(
        calledAt + timing.intervalMs,
        Math.min(lastAt + timing.quietMs, firstAt + timing.intervalMs),
      );
      timer = setTimeout(fire, Math.max(0, at - now));
    },
    cancel() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
