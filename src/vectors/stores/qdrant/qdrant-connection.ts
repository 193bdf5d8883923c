import { QdrantClient } from '@qdrant/js-client-rest';
import { StoreFailure } from '../vector-store.interface';

/** Where Qdrant is and how long to wait for it. */
export interface QdrantConnection {
  /** Base URL with port, e.g. `http://qdrant:6333` (a path is used as the API prefix). */
  readonly url: string;
  readonly apiKey?: string;
  /** Ask the server's version at start and warn on a mismatch (off in tests). */
  readonly checkCompatibility?: boolean;
  /** Longest wait for one answer, in milliseconds. */
  readonly timeoutMs: number;
}

/**
 * Answers asked for uncompressed. Asked for gzip (fetch's default), Qdrant streams its answer:
 * it writes the headers, then the compressed body in a second write, on a socket without
 * TCP_NODELAY; Nagle holds that second write until our side acknowledges the first, and
 * Linux delays that acknowledgement up to 40 ms when it has nothing to send back. That was
 * some 40 ms added to about half the searches and writes. An uncompressed answer carries its
 * length and goes in one write. Answers are small (a search's is tens of kilobytes), and
 * neither side spends CPU compressing them.
 */
const ANSWERS_UNCOMPRESSED = { 'accept-encoding': 'identity' };

/** A client of `@qdrant/js-client-rest` for this connection. */
export function qdrantClient(connection: QdrantConnection): QdrantClient {
  const url = new URL(connection.url);
  const prefix = url.pathname.replace(/\/+$/, '');
  return new QdrantClient({
    url: url.origin,
    ...(prefix ? { prefix } : {}),
    headers: ANSWERS_UNCOMPRESSED,
    apiKey: connection.apiKey,
    checkCompatibility: connection.checkCompatibility ?? true,
    timeout: connection.timeoutMs,
  });
}

/** The connection's URL as shown to operators: no credentials, no trailing slash. */
export function shownUrl(connection: QdrantConnection): string {
  const url = new URL(connection.url);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * A failed call to Qdrant, saying what failed and why in words that name no address.
 * `transient`: Qdrant did not answer, timed out, or answered that it cannot serve now
 * (5xx, 429): trying again later helps, and nothing is wrong with what was asked. The client's
 * error is not its `cause`: a refused connection there would read as PostgreSQL's outage to
 * what looks for one down an error's causes (database-errors.ts).
 */
export class QdrantFailure extends StoreFailure {
  constructor(
    message: string,
    transient: boolean,
    /** What Qdrant asked to wait (a 429's `Retry-After`), if it did. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message, transient);
    this.name = 'QdrantFailure';
  }
}

/** Runs one call to Qdrant; its failure becomes a {@link QdrantFailure} naming `what`. */
export async function qdrantCall<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw qdrantFailure(what, error);
  }
}

/**
 * Runs one read of Qdrant (a search, a collection's check or description), asked once more on
 * a new connection when the one it went on was closed before any answer came. Qdrant closes a
 * keep-alive connection idle for about 5 s (4.5 to 5.0 s measured against 1.18.3, actix's
 * keep-alive); its JavaScript client keeps idle connections 10 s, in an undici Agent of its own
 * that it lets no caller configure. A request sent in the moment Qdrant closes such a
 * connection fails with the connection reset or closed, though nothing is wrong: a read can be
 * asked again whether or not Qdrant saw it. Writes are not: their callers retry them later
 * (the failure is transient). test/qdrant-answers.e2e-spec.ts crosses a request with the close.
 */
export async function qdrantRead<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!closedBeforeAnswer(error)) throw qdrantFailure(what, error);
  }
  return qdrantCall(what, run);
}

/** fetch failed (no answer's head came) because the connection was closed or reset. */
function closedBeforeAnswer(error: unknown): boolean {
  const e = error as { name?: string; cause?: { code?: string } } | undefined;
  return e?.name === 'TypeError' && CLOSED.has(e.cause?.code ?? '');
}

const CLOSED = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

export function qdrantFailure(what: string, error: unknown): QdrantFailure {
  if (error instanceof QdrantFailure) return error;
  const e = error as {
    name?: string;
    status?: number;
    statusText?: string;
    data?: { status?: { error?: string } };
    message?: string;
    retry_after?: number;
    cause?: { code?: string };
  };
  // The client's timeout aborts the request: its own error, or fetch's AbortError.
  if (e?.name === 'QdrantClientTimeoutError' || e?.name === 'AbortError') {
    return new QdrantFailure(`Qdrant ${what} failed: no answer in time`, true);
  }
  if (e?.name === 'QdrantClientResourceExhaustedError') {
    return new QdrantFailure(`Qdrant ${what} failed: too many requests`, true, e.retry_after);
  }
  if (typeof e?.status === 'number') {
    const detail = e.data?.status?.error ?? e.statusText ?? '';
    return new QdrantFailure(
      `Qdrant ${what} failed: HTTP ${e.status}${detail ? `: ${withoutAddresses(detail)}` : ''}`,
      e.status >= 500 || e.status === 429,
    );
  }
  // fetch's network failures ("fetch failed") carry the reason in their cause's code.
  const code = e?.cause?.code;
  const reason = code
    ? (NETWORK_REASONS[code] ?? code)
    : withoutAddresses(e?.message ?? String(error));
  return new QdrantFailure(`Qdrant ${what} failed: ${reason}`, true);
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS)',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  UND_ERR_BODY_TIMEOUT: 'no answer in time',
};

/** Qdrant's messages may name peers' addresses (a node down): kept out of answers and logs. */
function withoutAddresses(text: string): string {
  return text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"',)]+/gi, '<address>')
    .replace(/\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b/g, '<address>')
    .slice(0, 300);
}
