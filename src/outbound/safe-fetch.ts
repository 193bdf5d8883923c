import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { DomainError, ErrorCode } from '../common/domain-error';
import { forbidden, UrlPolicy } from './url-policy';

/** A fetched page: its final URL (after redirects), media type and raw bytes. */
export interface FetchedPage {
  /** The requested URL, in canonical form. */
  readonly url: string;
  readonly finalUrl: string;
  /** The `Content-Type` header as sent, or '' when absent. */
  readonly contentType: string;
  readonly body: Buffer;
}

/** One request as {@link SafeFetcher.request} makes it. */
export interface FetchRequest {
  /**
   * Headers to send (`If-None-Match`, `Accept`, `User-Agent`...), over the defaults.
   * `Accept-Encoding` stays the fetcher's own: it decodes only what it asks for.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** When aborted, the connection is dropped at once and the signal's reason is thrown. */
  readonly signal?: AbortSignal;
  /**
   * Follow redirects (each target checked by the policy), or answer the redirect itself
   * with its status and `Location`, for a caller with rules of its own about where to go.
   */
  readonly followRedirects?: boolean;
  /** A smaller or larger body cap than the fetcher's, for this request. */
  readonly maxBytes?: number;
}

/** Any answer, whatever its status: the body is read only for a 2xx. */
export interface FetchResponse extends FetchedPage {
  readonly status: number;
  readonly headers: Readonly<http.IncomingHttpHeaders>;
}

export interface FetchLimits {
  /** One deadline for the whole fetch: DNS, connections, redirects and body. */
  readonly timeoutMs: number;
  /** Largest body, counted after decompression. */
  readonly maxBytes: number;
  readonly maxRedirects: number;
}

/** `dns.lookup` with `all: true`; tests pass their own to play DNS tricks. */
export type Resolver = (
  hostname: string,
  callback: (error: Error | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: Resolver = (hostname, callback) =>
  dnsLookup(hostname, { all: true }, (error, addresses) => callback(error, addresses ?? []));

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Raised inside the socket's lookup when a name resolves to a refused address. */
class RefusedAddress extends Error {}

/**
 * GET over http(s) that cannot be steered at internal services (SSRF). Every URL, the first
 * and each redirect target, passes {@link UrlPolicy}; a host name is resolved by our own
 * lookup, which refuses the connection if any address it returns is refused, and the
 * socket connects to the address that was checked (no second resolution an attacker's DNS
 * could answer differently). Bodies are capped after decompression, and one deadline
 * covers everything.
 */
export class SafeFetcher {
  constructor(
    private readonly policy: UrlPolicy,
    private readonly limits: FetchLimits,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  /**
   * The page at `raw`, or a DomainError (FORBIDDEN_URL, UPSTREAM_ERROR, TOO_LARGE). When
   * `cancel` aborts, the connection is dropped at once and its reason is thrown.
   */
  async fetch(raw: string, cancel?: AbortSignal): Promise<FetchedPage> {
    const { url, finalUrl, contentType, body, status } = await this.request(raw, {
      signal: cancel,
    });
    if (status < 200 || status > 299)
      throw upstream(`${new URL(finalUrl).host} answered HTTP ${status}`);
    return { url, finalUrl, contentType, body };
  }

  /**
   * The answer to a GET of `raw`, whatever its status (a 304, a 404, a 429 and its
   * `Retry-After` are the caller's to read); only a refused URL or address (FORBIDDEN_URL),
   * a failed connection or a deadline (UPSTREAM_ERROR) and a body over the cap (TOO_LARGE)
   * are thrown. The body of an answer other than 2xx is not read.
   */
  async request(raw: string, options: FetchRequest = {}): Promise<FetchResponse> {
    const { signal: cancel, followRedirects = true } = options;
    const maxBytes = options.maxBytes ?? this.limits.maxBytes;
    cancel?.throwIfAborted();
    let url = this.policy.check(raw);
    const requested = url.toString();
    const controller = new AbortController();
    const deadline = setTimeout(() => controller.abort(), this.limits.timeoutMs);
    const onCancel = () => controller.abort();
    cancel?.addEventListener('abort', onCancel, { once: true });
    try {
      for (let redirects = 0; ; redirects++) {
        const response = await this.get(url, options.headers, controller.signal);
        const status = response.statusCode ?? 0;
        const answer = {
          url: requested,
          finalUrl: url.toString(),
          contentType: response.headers['content-type'] ?? '',
          status,
          headers: response.headers,
        };
        if (followRedirects && REDIRECTS.has(status) && response.headers.location) {
          response.destroy();
          if (redirects >= this.limits.maxRedirects) {
            throw upstream(`more than ${this.limits.maxRedirects} redirects`);
          }
          url = this.policy.check(new URL(response.headers.location, url), 'redirect');
          continue;
        }
        if (status < 200 || status > 299) {
          response.destroy();
          return { ...answer, body: Buffer.alloc(0) };
        }
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          response.destroy();
          throw tooLarge(maxBytes);
        }
        return { ...answer, body: await readCapped(decoded(response), maxBytes) };
      }
    } catch (error) {
      if (cancel?.aborted) throw cancel.reason;
      if (error instanceof DomainError) throw error;
      if (error instanceof RefusedAddress) throw forbidden(`refused: ${error.message}`);
      if (controller.signal.aborted) {
        throw upstream(`no complete answer within ${this.limits.timeoutMs} ms`);
      }
      throw upstream(`fetching ${url.host} failed: ${(error as Error).message}`);
    } finally {
      clearTimeout(deadline);
      cancel?.removeEventListener('abort', onCancel);
      controller.abort();
    }
  }

  private get(
    url: URL,
    headers: FetchRequest['headers'],
    signal: AbortSignal,
  ): Promise<http.IncomingMessage> {
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = client.request(url, {
        method: 'GET',
        agent: false,
        signal,
        lookup: this.lookup,
        headers: {
          'User-Agent': 'agent-data-ingest',
          Accept: 'text/html, application/xhtml+xml, text/markdown, text/plain;q=0.9, */*;q=0.1',
          ...headers,
          'Accept-Encoding': 'gzip, deflate, br',
        },
      });
      request.once('response', resolve);
      request.once('error', reject);
      request.end();
    });
  }

  /** The socket's DNS step: every address must pass, and the checked one is used. */
  private readonly lookup = ((
    hostname: string,
    options: { all?: boolean },
    callback: (error: Error | null, address?: string | LookupAddress[], family?: number) => void,
  ) => {
    this.resolve(hostname, (error, addresses) => {
      if (error) return callback(error);
      if (addresses.length === 0) return callback(new Error(`${hostname} has no address`));
      for (const { address } of addresses) {
        const refusal = this.policy.addresses.refusal(address);
        if (refusal) return callback(new RefusedAddress(`${hostname} resolves to ${refusal}`));
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  }) as unknown as LookupFunction;
}

async function readCapped(stream: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      stream.destroy();
      throw tooLarge(maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** The body stream with its Content-Encoding undone. */
function decoded(response: http.IncomingMessage): Readable {
  const encoding = (response.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  switch (encoding) {
    case 'identity':
    case '':
      return response;
    case 'gzip':
    case 'x-gzip':
      return through(response, createGunzip());
    case 'deflate':
      return through(response, createInflate());
    case 'br':
      return through(response, createBrotliDecompress());
    default:
      response.destroy();
      throw upstream(`unsupported Content-Encoding ${JSON.stringify(encoding.slice(0, 50))}`);
  }
}

/** `source` through `decoder`; an error or abort on either side ends both. */
function through(source: Readable, decoder: Transform): Readable {
  return pipeline(source, decoder, () => undefined);
}

function upstream(message: string): DomainError {
  return new DomainError(ErrorCode.UPSTREAM_ERROR, message);
}

function tooLarge(limit: number): DomainError {
  return new DomainError(
    ErrorCode.TOO_LARGE,
    `the page is larger than ${limit} bytes, the ingest limit`,
    { limit },
  );
}
