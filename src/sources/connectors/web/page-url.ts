import { createHash } from 'node:crypto';
import { UNUSABLE_IN_IDS } from '../../../conversion/file-document';

/** How a URL's query string is treated when it is made canonical. */
export type QueryRule = 'keep' | 'drop';

/** Parameters that only say where a visitor came from: never part of a page's identity. */
const TRACKING =
  /^(utm_\w*|gclid|dclid|gbraid|wbraid|fbclid|msclkid|yclid|mc_cid|mc_eid|_ga|_gl|igshid|ref_src)$/i;

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * The one spelling of a page's URL, so that one page is one document: http(s) only, no
 * fragment, no credentials (a link carrying them is not followed), scheme and host in lower
 * case and default ports dropped (the URL parser does both), `.` and `..` resolved, runs of
 * `/` collapsed, percent-escapes of unreserved characters decoded and the others in upper
 * case.
 *
 * The query string is dropped (`'drop'`) for links found in pages: a page that differs from
 * another only by its query (`?sort=`, `?month=`, session ids) is the same page, and links
 * that count forever (`/calendar?month=13`) end at once. Where the site names a URL itself
 * (the start URL, llms.txt, a sitemap, `<link rel=canonical>`, a redirect), the query is
 * kept (`'keep'`) without its tracking parameters (`utm_*`, `gclid`...), the others sorted,
 * so that two spellings of one query are one page.
 */
export function canonicalUrl(raw: string, base: URL | undefined, query: QueryRule): URL | null {
  let url: URL;
  try {
    url = new URL(raw.trim(), base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username !== '' || url.password !== '') return null;
  url.hash = '';
  url.pathname = url.pathname.replace(/\/{2,}/g, '/').replace(/%[0-9a-f]{2}/gi, (escape) => {
    const character = String.fromCharCode(parseInt(escape.slice(1), 16));
    return UNRESERVED.test(character) ? character : escape.toUpperCase();
  });
  if (query === 'drop') {
    url.search = '';
  } else {
    const kept = [...url.searchParams]
      .filter(([name]) => !TRACKING.test(name))
      .sort(([a, x], [b, y]) => (a === b ? compare(x, y) : compare(a, b)));
    url.search = kept.length === 0 ? '' : new URLSearchParams(kept).toString();
  }
  return url;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Extensions of pages rendered by a server: the document is markdown, so `.md` replaces them. */
const PAGE_EXTENSIONS = new Set(['html', 'htm', 'xhtml', 'shtml', 'php', 'asp', 'aspx', 'jsp']);
/** Extensions a document id keeps, as `agent-data import` keeps them. */
const KEPT_EXTENSIONS = new Set(['md', 'markdown', 'txt', 'pdf', 'docx']);
const MAX_KEY_BYTES = 512;

/** A key, or why a URL cannot have one. */
export type KeyOf = { readonly key: string } | { readonly reason: string };

/**
 * A web source's scope: its start URL, and every URL of the same origin under the start
 * URL's folder. `https://docs.x/api/` and `https://docs.x/api` both scope `/api/…` (and
 * `/api` itself, the scope's root); a start URL naming a page (`/api/index.html`) scopes
 * its folder.
 */
export class Scope {
  /** The start URL in canonical form (its query kept). */
  readonly start: URL;
  readonly origin: string;
  /** The folder every page's path starts with, ending in `/`. */
  readonly folder: string;
  /** The path of the scope's root page when it is not the folder itself (`/api`, `/api/index.html`). */
  private readonly rootPath: string;

  constructor(raw: string) {
    const start = canonicalUrl(raw, undefined, 'keep');
    if (!start) throw new Error(`${raw} is not an http(s) URL without credentials`);
    this.start = start;
    this.origin = start.origin;
    const path = start.pathname;
    const leaf = path.slice(path.lastIndexOf('/') + 1);
    const extension = /\.([a-z0-9]+)$/i.exec(leaf)?.[1]?.toLowerCase();
    if (path.endsWith('/')) this.folder = path;
    else if (extension && (PAGE_EXTENSIONS.has(extension) || KEPT_EXTENSIONS.has(extension))) {
      this.folder = path.slice(0, path.length - leaf.length);
    } else this.folder = `${path}/`;
    this.rootPath = path;
  }

  contains(url: URL): boolean {
    return (
      url.origin === this.origin &&
      (url.pathname.startsWith(this.folder) || url.pathname === this.rootPath)
    );
  }

  /**
   * The document id of an in-scope URL, relative to the scope: `/api/auth/tokens` →
   * `auth/tokens.md`, the root → `index.md`, `/api/auth/` → `auth/index.md`, `page.html`
   * → `page.md` (`.md`, `.txt`, `.pdf`, `.docx` kept, `.md` added to anything else).
   * Segments are percent-decoded where the result is usable in an id, kept escaped where
   * not (an escaped `/`, a control character). A query string that survived
   * {@link canonicalUrl} becomes a short hash before the extension (`list-3f2a1b9c0d.md`),
   * the same query always giving the same key.
   */
  keyOf(url: URL): KeyOf {
    if (!this.contains(url)) return { reason: `${url.href} is outside ${this.start.href}` };
    const relative =
      url.pathname === this.rootPath && !this.rootPath.endsWith('/')
        ? ''
        : url.pathname.slice(this.folder.length);
    const segments = relative.split('/').map(decodedSegment);
    if (segments.slice(0, -1).includes(''))
      return { reason: `${url.pathname} has an empty segment` };
    const leaf = segments.pop() || 'index';
    const extension = /\.([a-z0-9]+)$/i.exec(leaf)?.[1] ?? '';
    const lower = extension.toLowerCase();
    let stem = leaf;
    let suffix = '.md';
    if (PAGE_EXTENSIONS.has(lower)) stem = leaf.slice(0, -extension.length - 1);
    else if (KEPT_EXTENSIONS.has(lower)) {
      stem = leaf.slice(0, -extension.length - 1);
      suffix = `.${extension}`;
    }
    if (stem === '') stem = 'index';
    if (url.search !== '')
      stem += `-${createHash('sha256').update(url.search).digest('hex').slice(0, 10)}`;
    const key = [...segments, `${stem}${suffix}`].join('/');
    const bytes = Buffer.byteLength(key);
    if (bytes > MAX_KEY_BYTES) {
      return { reason: `its document id would be ${bytes} bytes, over ${MAX_KEY_BYTES}` };
    }
    return { key };
  }
}

/** A percent-decoded path segment, or the segment as it is where decoding would not give an id's segment. */
function decodedSegment(segment: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return segment;
  }
  const unusable =
    decoded.includes('/') || decoded === '.' || decoded === '..' || UNUSABLE_IN_IDS.test(decoded);
  return unusable ? segment : decoded;
}
