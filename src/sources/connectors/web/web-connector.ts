import { MAX_CONVERTED_BYTES } from '../../../conversion/file-document';
import { AddressPolicy } from '../../../outbound/address-policy';
import { type Resolver, SafeFetcher } from '../../../outbound/safe-fetch';
import { UrlPolicy } from '../../../outbound/url-policy';
import { SOURCE_DEFAULTS, type WebSourceDeclaration } from '../../source-declaration';
import type { Connector, Enumeration, EnumerationContext } from '../connector';
import { HostPacer } from './host-pacer';
import { Scope } from './page-url';
import { SiteClient } from './site-client';
import { type CrawlLimits, SiteCrawl } from './site-crawl';

/** How a web source may fetch, from the server's configuration, and its politeness. */
export interface WebConnectorOptions {
  /** Plain http is read only when allowed (INGEST_ALLOW_HTTP). */
  readonly allowHttp: boolean;
  /** Non-public ranges that may be reached anyway (INGEST_ALLOWED_PRIVATE_CIDRS). */
  readonly allowedPrivateCidrs: readonly string[];
  /** One request's deadline, connection to last byte (INGEST_TIMEOUT_MS). */
  readonly requestTimeoutMs: number;
  /** The least time between the starts of two requests to a host; 250 ms. */
  readonly minIntervalMs?: number;
  /** Further attempts after a 5xx, a 429 or a failed connection; 2. */
  readonly retries?: number;
  /** The first backoff between attempts, tripled at each; 1 s. */
  readonly backoffMs?: number;
  /** The longest `Retry-After` waited for; 60 s. */
  readonly maxRetryAfterMs?: number;
  /** The longest `Crawl-delay` honoured; 60 s. */
  readonly maxCrawlDelayMs?: number;
  /** A whole run's time; 2 h. */
  readonly maxRunMs?: number;
  /** Documents held by one enumeration, in bytes; 64 MiB. */
  readonly maxHeldBytes?: number;
  /** DNS, for tests; the system's by default. */
  readonly resolver?: Resolver;
}

/** A redirect is a hop of the crawl, which follows them itself: the fetcher follows none. */
const FETCHER_REDIRECTS = 0;

/**
 * A web source: the pages under a URL (see {@link SiteCrawl} for how they are found and
 * read). Fetches are SSRF-safe as `ingest_document`'s are (the same address rules, checked
 * again at each redirect), but the host allow-list of `ingest_document`
 * (INGEST_ALLOWED_HOSTS) does not apply: the URL is the operator's own declaration.
 */
export class WebConnector implements Connector {
  private readonly scope: Scope;
  private readonly policy: UrlPolicy;
  private readonly fetcher: SafeFetcher;
  /** Kept between runs, so that a run starting right after another is paced too. */
  private readonly pacer: HostPacer;
  private readonly client: SiteClient;
  private readonly limits: CrawlLimits;

  constructor(declaration: WebSourceDeclaration, options: WebConnectorOptions) {
    this.scope = new Scope(declaration.url);
    this.policy = new UrlPolicy(
      'any',
      options.allowHttp,
      new AddressPolicy(options.allowedPrivateCidrs),
    );
    this.policy.check(this.scope.start);
    this.fetcher = new SafeFetcher(
      this.policy,
      {
        timeoutMs: options.requestTimeoutMs,
        maxBytes: MAX_CONVERTED_BYTES,
        maxRedirects: FETCHER_REDIRECTS,
      },
      options.resolver,
    );
    this.pacer = new HostPacer(options.minIntervalMs ?? 250);
    this.client = new SiteClient(this.fetcher, this.pacer, {
      retries: options.retries ?? 2,
      backoffMs: options.backoffMs ?? 1000,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    });
    this.limits = {
      maxPages: declaration.max_pages ?? SOURCE_DEFAULTS.web.max_pages,
      maxDepth: declaration.max_depth ?? SOURCE_DEFAULTS.web.max_depth,
      maxRunMs: options.maxRunMs ?? 2 * 3_600_000,
      maxHeldBytes: options.maxHeldBytes ?? 64 * 1024 * 1024,
      maxCrawlDelayMs: options.maxCrawlDelayMs ?? 60_000,
    };
  }

  enumerate(context: EnumerationContext): Promise<Enumeration> {
    const site = {
      scope: this.scope,
      client: this.client,
      pacer: this.pacer,
      policy: this.policy,
      // HTML holds more than its text: a page may be four times the body limit.
      maxBytes: Math.min(4 * context.maxBodyBytes, MAX_CONVERTED_BYTES),
    };
    return new SiteCrawl(site, this.limits, context).run();
  }
}
