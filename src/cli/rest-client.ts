import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

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

/** Attempts of a request the server asked to retry (429, 503) or that found no server. */
const ATTEMPTS = 6;

/**
 * The admin REST API of one server, as the command line uses it: JSON in and out, the key in
 * `X-API-Key`, and 429 / 503 / a refused connection retried with backoff (honouring
 * `Retry-After`), so that a server restarting or a rate limit slows a run down without
 * failing it.
 */
export class RestClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string | undefined,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.open(
      method,
      path,
      body === undefined
        ? {}
        : { body: () => JSON.stringify(body), contentType: 'application/json' },
    );
    const text = await response.text();
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
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        const body = options.body?.();
        response = await fetch(`${this.baseUrl}${path}`, {
          method,
          headers: {
            Accept: options.accept ?? 'application/json',
            ...(options.contentType === undefined ? {} : { 'Content-Type': options.contentType }),
            ...(this.apiKey === undefined ? {} : { 'X-API-Key': this.apiKey }),
          },
          // Node's fetch sends an async iterable as it is read (with duplex: 'half').
          body: body as string | undefined,
          ...(body instanceof Readable ? { duplex: 'half' } : {}),
        });
      } catch (error) {
        const reason = (error as { cause?: { code?: string } }).cause?.code ?? 'no answer';
        if (attempt >= ATTEMPTS) {
          throw new RequestFailed(0, 'UNREACHABLE', `no server at ${this.baseUrl} (${reason})`);
        }
        await this.pause(attempt, undefined, `no server at ${this.baseUrl} (${reason})`);
        continue;
      }
      if (response.ok) return response;
      const text = await response.text();
      const parsed = text === '' ? undefined : safeJson(text);
      const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
      const message = error?.message ?? `HTTP ${response.status}`;
      if ((response.status === 429 || response.status === 503) && attempt < ATTEMPTS) {
        await this.pause(attempt, response.headers.get('retry-after'), message);
        continue;
      }
      throw new RequestFailed(response.status, error?.code ?? `HTTP_${response.status}`, message);
    }
  }

  private async pause(attempt: number, retryAfter: string | null | undefined, why: string) {
    const seconds = Number(retryAfter);
    const ms = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 250 * 2 ** attempt;
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
