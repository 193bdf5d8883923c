/**
 * Whether a failure means PostgreSQL cannot be reached right now (down, restarting, failing
 * over, refusing connections, out of connection slots, or the pool waited too long for
 * one), as opposed to a statement that failed on its own. Retrying later helps the former.
 *
 * Looks through TypeORM's `driverError`, `cause` and the `errors` of an AggregateError
 * (Node reports a refused connection to every address of a host that way).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    const { code, message, driverError, cause, errors } = current as {
      code?: unknown;
      message?: unknown;
      driverError?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) {
      return true;
    }
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(message))) {
      return true;
    }
    pending.push(driverError, cause);
    if (Array.isArray(errors)) pending.push(...(errors as unknown[]));
  }
  return false;
}

/** What a client may be told of a database failure: its kind, never an address or a path. */
export function unavailableKind(error: unknown): string {
  for (
    let current = error as { code?: unknown; driverError?: unknown; cause?: unknown } | null;
    current;
  ) {
    if (typeof current.code === 'string') return current.code;
    current = (current.driverError ?? current.cause ?? null) as typeof current;
  }
  return 'unreachable';
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * SQLSTATEs of an unavailable server: class 08 (connection exception), 57P01
 * admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, in
 * recovery), 53300 too_many_connections.
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;

/** node-postgres reports these without a code. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable/,
  /^Cannot use a pool after calling end on the pool/,
];
