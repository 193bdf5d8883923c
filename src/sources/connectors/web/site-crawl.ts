import { createHash } from 'node:crypto';
import { DomainError, ErrorCode } from '../../../common/domain-error';
import type { SourceDocument } from '../../../conversion/file-document';
import type { FetchResponse } from '../../../outbound/safe-fetch';
import type { UrlPolicy } from '../../../outbound/url-policy';
import type { Enumeration, EnumerationContext, KnownItem, SourceItem } from '../connector';
import { readPage } from './page-content';
import { canonicalUrl, type QueryRule, Scope } from './page-url';
import { MAX_REDIRECTS, REDIRECTS, SiteClient, statusReason } from './site-client';
import { discover, readRobots, type SiteRules } from './site-map';
import type { HostPacer } from './host-pacer';

export interface CrawlLimits {
  readonly maxPages: number;
  readonly maxDepth: number;
  /** The whole run's time; pages not reached by then are not deleted for it. */
  readonly maxRunMs: number;
  /** Bytes of documents held in the enumeration; past them, an item reads its page again when asked. */
  readonly maxHeldBytes: number;
  /** The longest `Crawl-delay` honoured as it is. */
  readonly maxCrawlDelayMs: number;
}

/** The site a crawl reads, and how. */
export interface CrawledSite {
  readonly scope: Scope;
  readonly client: SiteClient;
  readonly pacer: HostPacer;
  readonly policy: UrlPolicy;
  /** The cap of a page's bytes (HTML is larger than the text it holds). */
  readonly maxBytes: number;
}

interface Queued {
  readonly url: URL;
  readonly key: string;
  readonly depth: number;
}

/** Links of a page remembered for its next run, at most this many characters. */
const MAX_REMEMBERED_LINKS = 16 * 1024;

/**
 * One run of a web source: robots.txt, then the site's own list of pages (llms.txt, a
 * sitemap) or else a breadth-first walk of links from the start URL, inside the scope, up
 * to `max_pages` pages and `max_depth` links away. Every page is asked for once per run,
 * under its canonical URL (see {@link canonicalUrl}); one key is one page.
 *
 * A page known from an earlier run is asked for conditionally (`If-None-Match`,
 * `If-Modified-Since`): a `304` gives its item again with the version it had, and no
 * document. In a walk of links, the links of a page that has not changed are needed all the
 * same, so each page's in-scope links (their paths, at most 16 KiB) are kept in its
 * validators and followed from there; a page whose links do not fit is asked for whole
 * every run. With a list from the site, links are not followed and none are kept.
 *
 * What is not deleted for want of being seen: a page that failed (5xx after retries, a
 * `Retry-After` too long) is in `failed`. When the walk could not reach everything (the
 * `max_pages` cap, the run's time, a failed page whose links were never read), every known
 * page it did not reach is in `failed` too, "not reached", rather than left out: only a
 * page the site answers `404` or `410` for, or that is no longer listed or linked in a
 * walk that reached everything, is gone.
 */
export class SiteCrawl {
  private readonly items: SourceItem[] = [];
  private readonly failed: Array<{ key: string; reason: string }> = [];
  private readonly skipped: Array<{ key: string; reason: string }> = [];
  private readonly queue: Queued[] = [];
  /** Keys queued or decided: a page is queued once, whatever the URL it was found under. */
  private readonly taken = new Set<string>();
  /** Keys whose page this run read, found gone, refused or counted as another's. */
  private readonly decided = new Set<string>();
  /** Why known pages not reached are not gone, when they are not. */
  private unreached: string | null = null;
  private rules!: SiteRules;
  private following = false;
  private held = 0;

  private readonly scope: Scope;
  private readonly client: SiteClient;
  private readonly signal: AbortSignal;

  constructor(
    private readonly site: CrawledSite,
    private readonly limits: CrawlLimits,
    private readonly context: EnumerationContext,
  ) {
    this.scope = site.scope;
    this.client = site.client;
    this.signal = context.signal;
  }

  async run(): Promise<Enumeration> {
    const started = performance.now();
    const { maxBytes } = this.site;
    const { signal } = this;
    this.rules = await readRobots(this.client, this.scope.origin, { maxBytes, signal });
    if (this.rules.crawlDelayMs !== undefined) {
      const delay = Math.min(this.rules.crawlDelayMs, this.limits.maxCrawlDelayMs);
      this.site.pacer.slowDown(this.scope.start.host, delay);
    }
    const { listing, problems } = await discover(this.client, this.scope, this.rules, {
      max: this.limits.maxPages,
      maxBytes,
      signal,
    });
    this.following = listing === null;
    this.offer(this.scope.start.href, undefined, 0, 'keep');
    for (const url of listing?.urls ?? []) this.offer(url.href, undefined, 0, 'keep');
    if (listing?.more)
      this.cut(`${listing.source} lists more than max_pages (${this.limits.maxPages})`);

    for (let next = 0; next < this.queue.length; next++) {
      signal.throwIfAborted();
      if (performance.now() - started > this.limits.maxRunMs) {
        this.cut(`the run stopped after ${duration(this.limits.maxRunMs)}`);
        break;
      }
      await this.visit(this.queue[next]);
    }

    const start = this.scope.keyOf(this.scope.start);
    if (this.following && this.items.length === 0 && 'key' in start) {
      const outcome = [...this.failed, ...this.skipped].find((entry) => entry.key === start.key);
      // Not read at all (the run's time was spent before it): not gone either.
      const why = outcome
        ? `could not be read (${outcome.reason})`
        : this.decided.has(start.key)
          ? 'is gone (HTTP 404 or 410)'
          : `was not reached: ${this.unreached ?? 'the run stopped'}`;
      throw new Error(`nothing to crawl: the start page ${this.scope.start.href} ${why}`);
    }
    if (this.unreached !== null) {
      for (const key of this.context.known.keys()) {
        if (!this.decided.has(key))
          this.failed.push({ key, reason: `not reached: ${this.unreached}` });
      }
    }
    const how = listing ? `listed by ${listing.source}` : `linked from ${this.scope.start.href}`;
    const trouble = problems.length > 0 ? `; incomplete: ${problems.join('; ')}` : '';
    return {
      complete: problems.length === 0,
      version: `${this.items.length} pages ${how}${trouble}`.slice(0, 1000),
      items: this.items,
      failed: this.failed,
      skipped: this.skipped,
    };
  }

  /** Queues a URL found in a list or a page, if it is in scope, allowed and new. */
  private offer(raw: string, base: URL | undefined, depth: number, query: QueryRule): void {
    const url = canonicalUrl(raw, base, query);
    if (!url || !this.scope.contains(url)) return;
    const key = this.scope.keyOf(url);
    if ('reason' in key) {
      if (!this.taken.has(url.href)) this.skipped.push({ key: url.href, reason: key.reason });
      this.taken.add(url.href);
      return;
    }
    if (this.taken.has(key.key)) return;
    if (!this.rules.allows(url)) {
      this.taken.add(key.key);
      this.decided.add(key.key);
      this.skipped.push({ key: key.key, reason: `${url.href} is disallowed by robots.txt` });
      return;
    }
    if (this.queue.length >= this.limits.maxPages) {
      this.cut(`more pages in scope than max_pages (${this.limits.maxPages})`);
      return;
    }
    this.taken.add(key.key);
    this.queue.push({ url, key: key.key, depth });
  }

  private async visit(entry: Queued): Promise<void> {
    if (this.decided.has(entry.key)) return;
    this.decided.add(entry.key);
    let { url, key } = entry;
    for (let hops = 0; ; hops++) {
      const known = this.context.known.get(key);
      let response: FetchResponse;
      try {
        response = await this.client.get(url, {
          headers: this.conditional(known),
          maxBytes: this.site.maxBytes,
          signal: this.signal,
        });
      } catch (error) {
        this.signal.throwIfAborted();
        return this.unreadable(key, error as Error, known, entry.depth);
      }
      const { status } = response;
      const location = response.headers.location;
      if (REDIRECTS.has(status) && location) {
        if (hops === MAX_REDIRECTS) {
          return this.fail(key, `more than ${MAX_REDIRECTS} redirects`, known, entry.depth);
        }
        const target = this.redirectTarget(url, location);
        if ('reason' in target) return this.skip(key, target.reason);
        if (target.key !== key) {
          // The page is read under the key of where it now lives, once.
          if (this.decided.has(target.key)) return;
          this.decided.add(target.key);
          this.taken.add(target.key);
        }
        ({ url, key } = target);
        continue;
      }
      if (status === 304) return this.unchanged(key, url, known, entry.depth);
      if (status === 404 || status === 410) return;
      if (status < 200 || status > 299) {
        return this.fail(key, statusReason(response), known, entry.depth);
      }
      return this.accept(url, key, response, known, entry.depth);
    }
  }

  /** Where a redirect leads, if the crawl may follow it there. */
  private redirectTarget(
    from: URL,
    location: string,
  ): { url: URL; key: string } | { reason: string } {
    const url = canonicalUrl(location, from, 'keep');
    if (!url) return { reason: `redirects to ${location.slice(0, 200)}, not an http(s) URL` };
    try {
      this.site.policy.check(url);
    } catch (error) {
      return { reason: `redirects to ${url.href}: ${(error as Error).message}` };
    }
    if (!this.scope.contains(url)) return { reason: `redirects out of scope, to ${url.href}` };
    if (!this.rules.allows(url)) {
      return { reason: `redirects to ${url.href}, disallowed by robots.txt` };
    }
    const key = this.scope.keyOf(url);
    return 'reason' in key
      ? { reason: `redirects to ${url.href}: ${key.reason}` }
      : { url, key: key.key };
  }

  /** Validators to send for a known page (in a walk, only if its links were kept). */
  private conditional(known: KnownItem | undefined): Record<string, string> {
    const validators = known?.validators;
    if (!validators || (this.following && validators.links === undefined)) return {};
    const headers: Record<string, string> = {};
    if (validators.etag) headers['If-None-Match'] = validators.etag;
    if (validators.last_modified) headers['If-Modified-Since'] = validators.last_modified;
    return headers;
  }

  private async accept(
    fetchedUrl: URL,
    fetchedKey: string,
    response: FetchResponse,
    known: KnownItem | undefined,
    depth: number,
  ): Promise<void> {
    const header = (name: string) => {
      const value = response.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    };
    let content: Awaited<ReturnType<typeof readPage>>;
    try {
      content = await readPage({
        url: fetchedUrl,
        contentType: response.contentType,
        body: response.body,
        robotsTag: header('x-robots-tag'),
      });
    } catch (error) {
      return this.fail(fetchedKey, (error as Error).message, known, depth);
    }
    if ('skipped' in content) {
      if (this.following && content.links) this.follow(content.links, fetchedUrl, depth);
      return this.skip(fetchedKey, content.skipped);
    }
    let url = fetchedUrl;
    let key = fetchedKey;
    const canonical = content.canonical && canonicalUrl(content.canonical, undefined, 'keep');
    if (canonical && this.scope.contains(canonical) && canonical.href !== url.href) {
      const named = this.scope.keyOf(canonical);
      if ('key' in named && named.key !== key) {
        // The same page as another: it is that one's document, read once.
        if (this.decided.has(named.key)) return;
        this.decided.add(named.key);
        this.taken.add(named.key);
        ({ key } = named);
        url = canonical;
      }
    }
    const { document } = content;
    const bytes = Buffer.byteLength(document.body);
    if (document.body.trim() === '') return this.skip(key, 'the page has no text');
    if (bytes > this.context.maxBodyBytes) {
      return this.skip(
        key,
        `its text is ${bytes} bytes, over the body limit of ${this.context.maxBodyBytes}`,
      );
    }
    const etag = header('etag');
    const lastModified = header('last-modified');
    const validators: Record<string, string> = {};
    if (etag) validators.etag = etag;
    if (lastModified) validators.last_modified = lastModified;
    if (this.following) {
      const paths = this.follow(content.links, url, depth);
      const remembered = paths.join('\n');
      if (remembered.length <= MAX_REMEMBERED_LINKS) validators.links = remembered;
    }
    const version = etag
      ? `etag:${etag}`
      : lastModified
        ? `modified:${lastModified}`
        : `sha256:${createHash('sha256').update(JSON.stringify(document)).digest('hex')}`;
    const hold = version !== known?.version && this.held + bytes <= this.limits.maxHeldBytes;
    if (hold) this.held += bytes;
    this.items.push({
      key,
      version,
      uri: url.href,
      validators,
      ...(hold ? { document } : { load: this.reader(fetchedUrl) }),
    });
  }

  /** Queues a page's in-scope links one step deeper; their paths, to remember. */
  private follow(links: readonly string[], base: URL, depth: number): string[] {
    const paths = new Set<string>();
    for (const link of links) {
      const url = canonicalUrl(link, base, 'drop');
      if (!url || !this.scope.contains(url)) continue;
      paths.add(url.pathname);
      if (depth < this.limits.maxDepth) this.offer(url.href, undefined, depth + 1, 'drop');
    }
    return [...paths];
  }

  /** A known page that has not changed (`304`): its item as it was, its kept links followed. */
  private unchanged(key: string, url: URL, known: KnownItem | undefined, depth: number): void {
    if (!known) {
      const reason = 'answered 304 Not Modified to a request that was not conditional';
      return this.fail(key, reason, known, depth);
    }
    this.items.push({
      key,
      version: known.version,
      uri: known.uri,
      validators: known.validators,
      load: this.reader(url),
    });
    this.followRemembered(known, depth);
  }

  private followRemembered(known: KnownItem | undefined, depth: number): void {
    const remembered = known?.validators?.links;
    if (!this.following || !remembered) return;
    this.follow(remembered.split('\n'), new URL(this.scope.origin), depth);
  }

  private unreadable(key: string, error: Error, known: KnownItem | undefined, depth: number): void {
    const code = error instanceof DomainError ? error.code : undefined;
    if (code === ErrorCode.TOO_LARGE) {
      return this.skip(key, `larger than ${this.site.maxBytes} bytes, the limit of a page`);
    }
    if (code === ErrorCode.FORBIDDEN_URL) return this.skip(key, error.message);
    this.fail(key, error.message, known, depth);
  }

  /**
   * A page that exists but could not be read: never deleted for it. In a walk, the pages it
   * links to may not be reached, so no known page is taken for gone this run; the links it
   * had last time are followed all the same.
   */
  private fail(key: string, reason: string, known: KnownItem | undefined, depth: number): void {
    this.failed.push({ key, reason });
    if (!this.following) return;
    this.cut('a page linking to it may be among those that could not be read');
    this.followRemembered(known, depth);
  }

  private skip(key: string, reason: string): void {
    this.skipped.push({ key, reason });
  }

  private cut(reason: string): void {
    this.unreached ??= reason;
  }

  /** The document of a page, read again (an item whose document was not held). */
  private reader(url: URL): () => Promise<SourceDocument> {
    return async () => {
      const response = await this.client.get(url, {
        maxBytes: this.site.maxBytes,
        signal: this.signal,
      });
      if (response.status < 200 || response.status > 299) {
        throw new Error(`${url.href} answered ${statusReason(response)}`);
      }
      const content = await readPage({
        url,
        contentType: response.contentType,
        body: response.body,
      });
      if ('skipped' in content) throw new Error(content.skipped);
      return content.document;
    };
  }
}

function duration(ms: number): string {
  return ms < 120_000 ? `${ms / 1000} s` : `${Math.round(ms / 60_000)} min`;
}
