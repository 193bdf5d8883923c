import { backoffDelay } from '../../../retry/backoff';
import { DomainError, ErrorCode } from '../../../common/domain-error';
import type { FetchResponse, SafeFetcher } from '../../../outbound/safe-fetch';
import type { HostPacer } from './host-pacer';

/** Who we are, to sites and to their robots.txt (which matches the part before the `/`). */
export const USER_AGENT = 'agent-data-sources/1.0';

/** Markdown when the site has it (a page's markdown twin), else HTML, else anything. */
const ACCEPT = 'text/markdown, text/html;q=0.9, */*;q=0.1';

export const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
export const MAX_REDIRECTS = 5;

export interface RetryRules {
  /** Further attempts after a 5xx, a 429 or a failed connection. */
  readonly retries: number;
  /**
   * The first backoff, tripled at each attempt (less up to a fifth, at random; never past
   * maxRetryAfterMs), when the site gives no `Retry-After`.
   */
  readonly backoffMs: number;
  /** The longest `Retry-After` waited for; a longer one fails the request at once. */
  readonly maxRetryAfterMs: number;
}

export interface GetOptions {
  readonly headers?: Readonly<Record<string, string>>;
  readonly maxBytes: number;
  readonly signal: AbortSignal;
}

/**
 * The crawler's GET: through the host's {@link HostPacer}, redirects answered rather than
 * followed (the crawler decides which are in its scope), a `429` or `503` retried after the
 * site's `Retry-After` (seconds or an HTTP date, up to `maxRetryAfterMs`), other `5xx` and
 * failed connections retried with a backoff. The last answer is returned whatever its status;
 * a refused URL (FORBIDDEN_URL), a body over the cap (TOO_LARGE) or a connection that kept
 * failing (UPSTREAM_ERROR) is thrown.
 */
export class SiteClient {
  constructor(
    private readonly fetcher: SafeFetcher,
    private readonly pacer: HostPacer,
    private readonly rules: RetryRules,
  ) {}

  /**
   * {@link get}, following redirects (at most five, each target checked by the fetcher's
   * policy): for robots.txt, llms.txt and sitemaps, which may live anywhere the site says.
   */
  async getFollowing(url: URL, options: GetOptions): Promise<FetchResponse> {
    let target = url;
    for (let hops = 0; ; hops++) {
      const response = await this.get(target, options);
      const location = response.headers.location;
      if (!REDIRECTS.has(response.status) || !location) return response;
      if (hops === MAX_REDIRECTS) {
        throw new DomainError(ErrorCode.UPSTREAM_ERROR, `more than ${MAX_REDIRECTS} redirects`);
      }
      try {
        target = new URL(location, target);
      } catch {
        throw new DomainError(
          ErrorCode.UPSTREAM_ERROR,
          `${target.href} redirects to an unreadable URL`,
        );
      }
    }
  }

  async get(url: URL, options: GetOptions): Promise<FetchResponse> {
    const headers = { 'User-Agent': USER_AGENT, Accept: ACCEPT, ...options.headers };
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.rules.retries;
      const backoff = backoffDelay(attempt, {
        firstMs: this.rules.backoffMs,
        factor: 3,
        maxMs: this.rules.maxRetryAfterMs,
        jitter: 0.2,
      });
      let response: FetchResponse;
      try {
        response = await this.pacer.run(url.host, options.signal, () =>
          this.fetcher.request(url.href, {
            headers,
            followRedirects: false,
            maxBytes: options.maxBytes,
            signal: options.signal,
          }),
        );
      } catch (error) {
        options.signal.throwIfAborted();
        if (last || !(error instanceof DomainError) || error.code !== ErrorCode.UPSTREAM_ERROR) {
          throw error;
        }
        this.pacer.holdFor(url.host, backoff);
        continue;
      }
      const { status } = response;
      if (status === 429 || status === 503) {
        const asked = retryAfterMs(response.headers['retry-after']);
        const wait = asked ?? backoff;
        if (last || wait > this.rules.maxRetryAfterMs) return response;
        this.pacer.holdFor(url.host, wait);
        continue;
      }
      if (status >= 500 && !last) {
        this.pacer.holdFor(url.host, backoff);
        continue;
      }
      return response;
    }
  }
}

/** `Retry-After` in ms: delay-seconds or an HTTP date; `null` when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Why an answer that is neither a page nor gone cannot be read, for a failed item. */
export function statusReason(response: FetchResponse): string {
  const { status } = response;
  const asked = retryAfterMs(response.headers['retry-after']);
  if ((status === 429 || status === 503) && asked !== null) {
    return `HTTP ${status}, asked to retry after ${Math.ceil(asked / 1000)} s`;
  }
  return `HTTP ${status}`;
}
