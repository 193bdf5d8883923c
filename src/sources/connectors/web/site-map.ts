import { gunzipSync } from 'node:zlib';
import { XMLParser } from 'fast-xml-parser';
import robotsParser from 'robots-parser';
import type { FetchResponse } from '../../../outbound/safe-fetch';
import { canonicalUrl, Scope } from './page-url';
import { SiteClient, statusReason, USER_AGENT } from './site-client';

/** What robots.txt says to us. */
export interface SiteRules {
  allows(url: URL): boolean;
  /** `Crawl-delay` for us (or `*`), in ms. */
  readonly crawlDelayMs: number | undefined;
  /** Its `Sitemap:` lines. */
  readonly sitemaps: readonly string[];
}

/** The pages a site lists for its scope, read instead of following links. */
export interface Listing {
  /** Where the list came from (`https://docs.x/llms.txt`). */
  readonly source: string;
  /** In scope, canonical (query kept), distinct, at most the number asked for. */
  readonly urls: readonly URL[];
  /** In-scope pages were left out: more than asked for, or sitemaps beyond the bound. */
  readonly more: boolean;
}

export interface Discovery {
  readonly listing: Listing | null;
  /** Lists that exist but could not be read: the enumeration cannot be complete. */
  readonly problems: readonly string[];
}

export interface DiscoveryOptions {
  /** The number of pages wanted. */
  readonly max: number;
  readonly maxBytes: number;
  readonly signal: AbortSignal;
}

/** Sitemap files read at most in one run (an index and its children together). */
const MAX_SITEMAP_FILES = 20;

/**
 * robots.txt of `origin`: its rules for {@link USER_AGENT} (else `*`). A missing one (a
 * 4xx other than 429) allows everything; one that cannot be read (5xx or 429 after retries,
 * no connection) stops the run, since nothing may be fetched without knowing what it forbids.
 */
export async function readRobots(
  client: SiteClient,
  origin: string,
  options: Omit<DiscoveryOptions, 'max'>,
): Promise<SiteRules> {
  const url = new URL('/robots.txt', origin);
  let response: FetchResponse;
  try {
    response = await client.getFollowing(url, options);
  } catch (error) {
    options.signal.throwIfAborted();
    throw new Error(`${url.href} could not be read: ${(error as Error).message}`);
  }
  // A 429 is not "no robots.txt": the site is asking to be left alone.
  if (response.status >= 400 && response.status < 500 && response.status !== 429) return allowAll;
  if (response.status < 200 || response.status > 299) {
    throw new Error(`${url.href} could not be read: ${statusReason(response)}`);
  }
  // A site that answers every path with its HTML shell has no robots.txt.
  if (isHtml(response)) return allowAll;
  const robots = robotsParser(url.href, response.body.toString('utf8'));
  const delay = robots.getCrawlDelay(USER_AGENT);
  return {
    allows: (page) => robots.isAllowed(page.href, USER_AGENT) !== false,
    crawlDelayMs: delay === undefined || !(delay > 0) ? undefined : delay * 1000,
    sitemaps: robots.getSitemaps(),
  };
}

const allowAll: SiteRules = { allows: () => true, crawlDelayMs: undefined, sitemaps: [] };

/**
 * The site's own list of the pages in scope, first found of: `llms.txt` (at the scope's
 * folder, then the site's root), `llms-full.txt` (the same), the sitemaps robots.txt names
 * (else `sitemap.xml` at the scope's folder and at the root; indexes followed, at most
 * {@link MAX_SITEMAP_FILES} files). A list counts only if it names at least one page in
 * scope; with none, the crawler follows links instead.
 */
export async function discover(
  client: SiteClient,
  scope: Scope,
  rules: SiteRules,
  options: DiscoveryOptions,
): Promise<Discovery> {
  const problems: string[] = [];
  for (const name of ['llms.txt', 'llms-full.txt']) {
    for (const url of candidates(scope, name)) {
      if (!rules.allows(url)) continue;
      const response = await fetchList(client, url, options, problems);
      if (!response || isHtml(response)) continue;
      const pages = new InScope(scope, options.max);
      pages.add(markdownLinks(response.body.toString('utf8')), new URL(response.finalUrl));
      if (pages.urls.length > 0) {
        const listing = { source: response.finalUrl, urls: pages.urls, more: pages.more };
        return { listing, problems };
      }
    }
  }
  const sitemaps =
    rules.sitemaps.length > 0 ? rules.sitemaps : candidates(scope, 'sitemap.xml').map(String);
  const listing = await readSitemaps(client, scope, sitemaps, options, problems);
  return { listing: listing.urls.length > 0 ? listing : null, problems };
}

/** `name` at the scope's folder and at the site's root. */
function candidates(scope: Scope, name: string): URL[] {
  const folder = new URL(name, new URL(scope.folder, scope.origin));
  const root = new URL(`/${name}`, scope.origin);
  return folder.href === root.href ? [root] : [folder, root];
}

/** A list's answer when it has one; a missing list is `null`, one that failed a problem. */
async function fetchList(
  client: SiteClient,
  url: URL,
  options: Omit<DiscoveryOptions, 'max'>,
  problems: string[],
): Promise<FetchResponse | null> {
  try {
    const response = await client.getFollowing(url, options);
    if (response.status >= 200 && response.status <= 299) return response;
    if (response.status >= 500 || response.status === 429) {
      problems.push(`${url.href} could not be read: ${statusReason(response)}`);
    }
    return null;
  } catch (error) {
    options.signal.throwIfAborted();
    const { code } = error as { code?: string };
    // A list too large to read is not used; the crawl goes on without it.
    if (code !== 'TOO_LARGE') {
      problems.push(`${url.href} could not be read: ${(error as Error).message}`);
    }
    return null;
  }
}

async function readSitemaps(
  client: SiteClient,
  scope: Scope,
  roots: readonly string[],
  options: DiscoveryOptions,
  problems: string[],
): Promise<Listing> {
  const queue = [...new Set(roots)];
  const pages = new InScope(scope, options.max);
  let read = 0;
  let source = '';
  for (let next = 0; next < queue.length && read < MAX_SITEMAP_FILES && !pages.more; next++) {
    const url = canonicalUrl(queue[next], new URL(scope.origin), 'keep');
    if (!url) continue;
    read++;
    const response = await fetchList(client, url, options, problems);
    if (!response) continue;
    let entries: ReturnType<typeof sitemapEntries>;
    try {
      entries = sitemapEntries(response.body, options.maxBytes);
    } catch (error) {
      problems.push(`${url.href} could not be read: ${(error as Error).message}`);
      continue;
    }
    source ||= url.href;
    for (const child of entries.sitemaps) if (!queue.includes(child)) queue.push(child);
    pages.add(entries.pages, url);
  }
  return { source, urls: pages.urls, more: pages.more || queue.length > read };
}

/** The distinct in-scope URLs of lists, up to a number: `more` once one more was offered. */
class InScope {
  readonly urls: URL[] = [];
  more = false;
  private readonly seen = new Set<string>();

  constructor(
    private readonly scope: Scope,
    private readonly max: number,
  ) {}

  add(links: readonly string[], base: URL): void {
    for (const link of links) {
      const url = canonicalUrl(link, base, 'keep');
      if (!url || !this.scope.contains(url) || this.seen.has(url.href)) continue;
      if (this.urls.length === this.max) {
        this.more = true;
        return;
      }
      this.seen.add(url.href);
      this.urls.push(url);
    }
  }
}

/** Targets of markdown links (`[text](url)`, `[ref]: url`), in order. */
export function markdownLinks(text: string): string[] {
  const links: string[] = [];
  const inline = /\]\(\s*<?([^()\s<>]+)>?(?:\s+["'(][^)]*)?\)/g;
  const reference = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm;
  for (const match of text.matchAll(inline)) links.push(match[1]);
  for (const match of text.matchAll(reference)) links.push(match[1]);
  return links;
}

const xml = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  // No entity of a DOCTYPE is expanded (no billion laughs); the five of XML are decoded below.
  processEntities: false,
  parseTagValue: false,
  isArray: (name) => name === 'url' || name === 'sitemap',
});

/** The page and child-sitemap URLs of a sitemap or sitemap index (gzipped or not). */
export function sitemapEntries(
  body: Buffer,
  maxBytes: number,
): { pages: string[]; sitemaps: string[] } {
  let bytes = body;
  if (body[0] === 0x1f && body[1] === 0x8b) {
    try {
      bytes = gunzipSync(body, { maxOutputLength: maxBytes });
    } catch (error) {
      throw new Error(
        (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE'
          ? `larger than ${maxBytes} bytes once unzipped`
          : 'not a readable gzip file',
      );
    }
  }
  const document = xml.parse(bytes.toString('utf8')) as {
    urlset?: { url?: Array<{ loc?: unknown }> };
    sitemapindex?: { sitemap?: Array<{ loc?: unknown }> };
  };
  if (!document.urlset && !document.sitemapindex) {
    throw new Error('not a sitemap (no <urlset> or <sitemapindex>)');
  }
  const locations = (entries: Array<{ loc?: unknown }> | undefined) =>
    (entries ?? [])
      .map((entry) => entry?.loc)
      .filter((loc): loc is string => typeof loc === 'string')
      .map((loc) => xmlText(loc.trim()));
  return {
    pages: locations(document.urlset?.url),
    sitemaps: locations(document.sitemapindex?.sitemap),
  };
}

function xmlText(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);/gi, (entity, name: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (name[0] !== '#') return named[name.toLowerCase()] ?? entity;
    const code =
      name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1));
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
  });
}

function isHtml(response: FetchResponse): boolean {
  return (
    /^\s*(text\/html|application\/xhtml\+xml)/i.test(response.contentType) ||
    /^\s*<(!doctype\s+html|html)\b/i.test(response.body.subarray(0, 512).toString('latin1'))
  );
}
