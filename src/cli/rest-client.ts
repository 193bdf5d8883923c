import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Backoff, backoffDelay } from '../retry/backoff';

/** A failure of one request, with the server's error code when it gave one. */
export class RequestFailed extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RequestFailed';
  }
}

/**
 * Attempts of a request the server asked to retry (429, 503, 409 IDEMPOTENCY_KEY_IN_USE) or
 * whose connection failed.
 */
const ATTEMPTS = 6;
/** Waits between them when the server names none (Retry-After): 0.5 s doubling to 8 s. */
const RETRY: Backoff = { firstMs: 500, maxMs: 8000, jitter: 0.2 };

/**
 * The admin REST API of one server, as the command line uses it: JSON in and out, the key in
 * `X-API-Key`, and 429 / 503 / a failed connection retried with backoff (honouring
 * `Retry-After`), so that a server restarting or a rate limit slows a run down without
 * failing it. A write is retried after a cut connection safely only with an idempotency key.
 */
export class RestClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string | undefined,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /**
   * One JSON request, retried as above. With `idempotencyKey` (sent as `Idempotency-Key`, the
   * same on every attempt) a write whose connection was cut is retried too and runs once on the
   * server; a retry that finds the first attempt still running waits for its answer.
   */
  async call<T>(
    method: string,
    path: string,
    body?: unknown,
    options: { idempotencyKey?: string } = {},
  ): Promise<T> {
    const { text } = await this.attempts(method, path, {
      ...(body === undefined
        ? {}
        : { body: () => JSON.stringify(body), contentType: 'application/json' }),
      idempotencyKey: options.idempotencyKey,
      read: true,
    });
    return (text === '' ? undefined : safeJson(text)) as T;
  }

  /**
   * A request whose answer is read by the caller (a stream of bytes): resolves with the
   * response once it is a success, its body unread; a refusal throws as {@link call} does.
   * `body` gives the request body afresh for each attempt (a stream is sent as it is read).
   */
  async open(
    method: string,
    path: string,
    options: { body?: () => string | Readable; contentType?: string; accept?: string } = {},
  ): Promise<Response> {
    return (await this.attempts(method, path, { ...options, read: false })).response;
  }

  /**
   * The attempts of one request. With `read`, a success's body is read within the attempt,
   * so that a connection cut while the answer arrives is retried as one cut before it.
   */
  private async attempts(
    method: string,
    path: string,
    options: {
      body?: () => string | Readable;
      contentType?: string;
      accept?: string;
      idempotencyKey?: string;
      read: boolean;
    },
  ): Promise<{ response: Response; text: string }> {
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      let text = '';
      try {
        const body = options.body?.();
        response = await fetch(`${this.baseUrl}${path}`, {
          method,
          headers: {
            Accept: options.accept ?? 'application/json',
            ...(options.contentType === undefined ? {} : { 'Content-Type': options.contentType }),
            ...(this.apiKey === undefined ? {} : { 'X-API-Key': this.apiKey }),
            ...(options.idempotencyKey === undefined
              ? {}
              : { 'Idempotency-Key': options.idempotencyKey }),
          },
          // Node's fetch sends an async iterable as it is read (with duplex: 'half').
          body: body as string | undefined,
          ...(body instanceof Readable ? { duplex: 'half' } : {}),
        });
        if (options.read || !response.ok) text = await response.text();
      } catch (error) {
        const reason = (error as { cause?: { code?: string } }).cause?.code ?? 'no answer';
        if (attempt >= ATTEMPTS) {
          throw new RequestFailed(0, 'UNREACHABLE', `no server at ${this.baseUrl} (${reason})`);
        }
        await this.pause(attempt, undefined, `no server at ${this.baseUrl} (${reason})`);
        continue;
      }
      if (response.ok) return { response, text };
      const parsed = text === '' ? undefined : safeJson(text);
      const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
      // An answer without the API's error object comes from something else at that address
      // (another server, a proxy's page): said so, rather than a bare status.
      const message =
        error?.message ??
        `HTTP ${response.status} from ${this.baseUrl}, not an answer of Agent Data's API (is it the server's address?)`;
      const retried =
        response.status === 429 ||
        response.status === 503 ||
        (response.status === 409 && error?.code === 'IDEMPOTENCY_KEY_IN_USE');
      if (retried && attempt < ATTEMPTS) {
        await this.pause(attempt, response.headers.get('retry-after'), message);
        continue;
      }
      throw new RequestFailed(response.status, error?.code ?? `HTTP_${response.status}`, message);
    }
  }

  private async pause(attempt: number, retryAfter: string | null | undefined, why: string) {
    const seconds = Number(retryAfter);
    const ms =
      Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : backoffDelay(attempt - 1, RETRY);
    this.log(`${why}; retrying in ${Math.round(ms / 100) / 10} s`);
    await sleep(ms);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
