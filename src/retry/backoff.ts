/**
 * How long to wait before the next attempt, wherever something is tried again: the LISTEN
 * connection, the vector worker's claims, a failed document, leases given back, a restarted
 * worker process, the CLI's requests, a web source's pages. The loops differ (a timer, a
 * sleep, a host's pacer), so this computes the wait and the caller waits it.
 */
export interface Backoff {
  /** The wait before the first retry (attempt 0). */
  readonly firstMs: number;
  /** No wait is longer, jitter included. */
  readonly maxMs: number;
  /** Each wait is this many times the one before; 2 unless said. */
  readonly factor?: number;
  /**
   * The share of each wait drawn at random below it: 0.5 waits between half of it and all of
   * it. Clients that failed together (replicas losing the database at once) then come back
   * spread out rather than together.
   */
  readonly jitter: number;
}

/** The wait before retry `attempt` (0 for the first): firstMs × factor^attempt, capped, jittered. */
export function backoffDelay(attempt: number, backoff: Backoff, random = Math.random): number {
  const { firstMs, maxMs, factor = 2, jitter } = backoff;
  const full = Math.min(maxMs, firstMs * factor ** Math.max(0, attempt));
  return Math.round(full * (1 - jitter * random()));
}
