import {
  documentOfFile,
  type SourceDocument,
  withFrontMatter,
} from '../../../conversion/file-document';
import {
  charsetOf,
  decodeText,
  looksLikeHtml,
  MAX_LINKS,
  metaCharset,
  readHtml,
  resolved,
} from '../../../conversion/html-page';
import { markdownLinks } from './site-map';

/** A fetched page, as the crawler hands it over. */
export interface FetchedBody {
  /** The page's final URL: links and relative references resolve against it. */
  readonly url: URL;
  readonly contentType: string;
  readonly body: Buffer;
  /** `X-Robots-Tag`, if the site sent one. */
  readonly robotsTag?: string;
}

/** What a page holds for the knowledge base and for the crawl. */
export interface PageContent {
  readonly document: SourceDocument;
  /** Links of the page, absolute, in order (not yet canonical, not yet scoped). */
  readonly links: readonly string[];
  /** `<link rel="canonical">`, absolute. */
  readonly canonical?: string;
}

/** Not a document, and why (an image, a page that asks not to be indexed). */
export interface NotADocument {
  readonly skipped: string;
  /** The links of a page that is not indexed but may be followed (`noindex` alone). */
  readonly links?: readonly string[];
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/**
 * A page's document, by its media type: markdown (what `Accept` asks for first) and plain
 * text taken as they are, front matter giving title, tags and metadata as for a file; HTML
 * reduced to its main content (see {@link readHtml}) and converted to markdown; PDF and DOCX
 * converted as `agent-data import` converts them. Other types (images, archives, JSON) are
 * not documents. Text is decoded by its charset (UTF-8 by default); bytes that are not
 * valid in it become U+FFFD, as a browser shows them, rather than keep a page with one bad
 * byte out of the knowledge base. Throws naming the problem (an unreadable PDF).
 */
export async function readPage(page: FetchedBody): Promise<PageContent | NotADocument> {
  const robots = robotsDirectives(page.robotsTag);
  const noindex = 'the page asks not to be indexed (X-Robots-Tag: noindex)';
  const type = mediaTypeOf(page);
  switch (type) {
    case 'text/markdown':
    case 'text/plain': {
      const text = decodeText(page.body, charsetOf(page.contentType));
      if (text.includes('\u0000')) return { skipped: `binary data served as ${type}` };
      const found = type === 'text/markdown' && !robots.nofollow ? markdownLinks(text) : [];
      const links = absolute(found, page.url);
      if (robots.noindex) return { skipped: noindex, links };
      return { document: withFrontMatter(text), links };
    }
    case 'text/html':
      return htmlPage(page, robots);
    case 'application/pdf':
      if (robots.noindex) return { skipped: noindex };
      return { document: await documentOfFile('page.pdf', page.body), links: [] };
    case DOCX:
      if (robots.noindex) return { skipped: noindex };
      return { document: await documentOfFile('page.docx', page.body), links: [] };
    default:
      return { skipped: robots.noindex ? noindex : `not a page that is imported (${type})` };
  }
}

/** The media type a page is read as: its `Content-Type`, else its extension, else its bytes. */
function mediaTypeOf(page: FetchedBody): string {
  const declared = page.contentType.split(';')[0].trim().toLowerCase();
  const aliases: Record<string, string> = {
    'text/x-markdown': 'text/markdown',
    'application/xhtml+xml': 'text/html',
    'application/x-pdf': 'application/pdf',
  };
  if (declared !== '' && declared !== 'application/octet-stream') {
    return aliases[declared] ?? declared;
  }
  const extension = /\.([a-z]+)$/i.exec(page.url.pathname)?.[1]?.toLowerCase() ?? '';
  const byExtension: Record<string, string> = {
    md: 'text/markdown',
    markdown: 'text/markdown',
    txt: 'text/plain',
    html: 'text/html',
    htm: 'text/html',
    pdf: 'application/pdf',
    docx: DOCX,
  };
  if (byExtension[extension]) return byExtension[extension];
  if (page.body.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf';
  if (looksLikeHtml(page.body)) return 'text/html';
  return declared || 'application/octet-stream';
}

interface Directives {
  readonly noindex: boolean;
  readonly nofollow: boolean;
}

function robotsDirectives(text: string | undefined): Directives {
  const value = (text ?? '').toLowerCase();
  return {
    noindex: /\b(noindex|none)\b/.test(value),
    nofollow: /\b(nofollow|none)\b/.test(value),
  };
}

/**
 * An HTML page's main content as markdown (see {@link readHtml}), its links and canonical
 * link; a page that asks not to be indexed (header or meta robots) gives only its links.
 */
function htmlPage(page: FetchedBody, header: Directives): PageContent | NotADocument {
  const html = decodeText(page.body, charsetOf(page.contentType) ?? metaCharset(page.body));
  const read = readHtml(html, page.url);
  const meta = robotsDirectives(read.robots);
  const nofollow = header.nofollow || meta.nofollow;
  const links = nofollow ? [] : [...read.links];
  if (header.noindex || meta.noindex) {
    const source = header.noindex ? 'X-Robots-Tag' : 'meta robots';
    return { skipped: `the page asks not to be indexed (${source}: noindex)`, links };
  }
  const { body, title } = read.content();
  return {
    document: {
      body,
      title,
      metadata: { source_type: 'html' },
    },
    links,
    canonical: read.canonical,
  };
}

function absolute(links: readonly string[], base: URL): string[] {
  return links
    .slice(0, MAX_LINKS)
    .map((link) => resolved(link, base))
    .filter((link): link is string => link !== undefined);
}
