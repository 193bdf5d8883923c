import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import {
  documentOfFile,
  markdownOf,
  type SourceDocument,
  withFrontMatter,
} from '../../../conversion/file-document';
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

/** Links read from one page at most: a page of more is a listing, not a page to crawl from. */
const MAX_LINKS = 5000;
const MAX_TITLE_CHARS = 500;
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/**
 * A page's document, by its media type: markdown (what `Accept` asks for first) and plain
 * text taken as they are, front matter giving title, tags and metadata as for a file; HTML
 * reduced to its main content (see {@link htmlPage}) and converted to markdown; PDF and DOCX
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
  const head = page.body.subarray(0, 1024).toString('latin1');
  if (head.startsWith('%PDF-')) return 'application/pdf';
  if (/^\s*<(!doctype\s+html|html|head|body)\b/i.test(head)) return 'text/html';
  return declared || 'application/octet-stream';
}

function charsetOf(contentType: string): string | undefined {
  return /;\s*charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType)?.[1];
}

function decodeText(bytes: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    // An unknown charset label: UTF-8 is the web's default and the best remaining guess.
    return new TextDecoder('utf-8').decode(bytes);
  }
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

/** What is not content wherever it stands: code, forms, and what the page says is navigation. */
const NEVER_CONTENT = [
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'svg',
  'canvas',
  'form',
  'button',
  'nav',
  'dialog',
  '[role="navigation"]',
  '[role="banner"]',
  '[role="contentinfo"]',
  '[role="search"]',
  '[hidden]',
  '[aria-hidden="true"]',
].join(', ');
/** The site's header, footer and side bar; inside the main content or an article they are content. */
const SITE_CHROME = 'header, footer, aside';
const MAIN = 'main, [role="main"]';

/**
 * An HTML page's main content as markdown. Links are read first, from the whole page
 * (navigation is how a crawl finds pages). Then what is never content goes (scripts,
 * navigation, forms; the site's header, footer and side bar), and the content is the
 * page's `<main>` when it marks one, else what Readability finds (the page's body when it
 * finds nothing). The title is the content's first `<h1>`, else Readability's, else
 * `<title>`.
 */
function htmlPage(page: FetchedBody, header: Directives): PageContent | NotADocument {
  const html = decodeText(page.body, charsetOf(page.contentType) ?? metaCharset(page.body));
  const { document } = parseHTML(wellFormed(html));
  const meta = robotsDirectives(
    [...document.querySelectorAll('meta[name][content]')]
      .filter((m) => /^(robots|agent-data-sources)$/i.test(m.getAttribute('name') ?? ''))
      .map((m) => m.getAttribute('content'))
      .join(','),
  );
  const nofollow = header.nofollow || meta.nofollow;
  const base = baseOf(document.querySelector('base[href]')?.getAttribute('href'), page.url);
  const links: string[] = [];
  for (const anchor of document.querySelectorAll('a[href], area[href]')) {
    const href = resolved(anchor.getAttribute('href'), base);
    if (href === undefined) continue;
    // The content's links lead to the same pages wherever they are read from.
    anchor.setAttribute('href', href);
    if (links.length < MAX_LINKS && !/\bnofollow\b/i.test(anchor.getAttribute('rel') ?? '')) {
      links.push(href);
    }
  }
  for (const image of document.querySelectorAll('img[src]')) {
    const src = resolved(image.getAttribute('src'), base);
    if (src !== undefined) image.setAttribute('src', src);
  }
  if (header.noindex || meta.noindex) {
    const source = header.noindex ? 'X-Robots-Tag' : 'meta robots';
    return {
      skipped: `the page asks not to be indexed (${source}: noindex)`,
      links: nofollow ? [] : links,
    };
  }
  const canonical = resolved(
    document.querySelector('link[rel~="canonical"][href]')?.getAttribute('href'),
    base,
  );
  const pageTitle = clean(document.title);

  for (const element of document.querySelectorAll(NEVER_CONTENT)) element.remove();
  for (const element of document.querySelectorAll(SITE_CHROME)) {
    if (!element.parentElement?.closest(`${MAIN}, article`)) element.remove();
  }
  const main = document.querySelector(MAIN);
  let content: string;
  let title: string | undefined;
  if (main) {
    content = main.innerHTML;
    title = clean(main.querySelector('h1')?.textContent);
  } else {
    const h1 = clean(document.querySelector('h1')?.textContent);
    // Readability changes the tree it reads: the body is kept aside for a page it finds nothing in.
    const whole = document.body?.innerHTML ?? '';
    const article = new Readability(
      document as unknown as ConstructorParameters<typeof Readability>[0],
    ).parse();
    content = article?.content || whole;
    title = h1 ?? clean(article?.title ?? undefined);
  }
  const body = markdownOf(content).trim();
  return {
    document: {
      body,
      title: (title ?? pageTitle)?.slice(0, MAX_TITLE_CHARS),
      metadata: { source_type: 'html' },
    },
    links: nofollow ? [] : links,
    canonical,
  };
}

/** What belongs in `<head>` wherever a page without one puts it. */
const HEAD_ONLY = /<title\b[^>]*>[\s\S]*?<\/title>|<(meta|link|base)\b[^>]*>/gi;

/**
 * The page as linkedom can read it: linkedom builds the tree as the text nests and adds no
 * missing `<html>`, `<head>` or `<body>` as a browser does, so a page without them (or
 * with a part of them) is put back into that shape first.
 */
function wellFormed(html: string): string {
  const bodyMatch = /<body\b[^>]*>([\s\S]*?)(?:<\/body>|$)/i.exec(html);
  let head = /<head\b[^>]*>([\s\S]*?)<\/head>/i.exec(html)?.[1];
  let body = bodyMatch?.[1];
  if (body === undefined) {
    body = html.replace(/<!doctype[^>]*>|<\/?html\b[^>]*>|<head\b[^>]*>[\s\S]*?<\/head>/gi, '');
    if (head === undefined) {
      head = (body.match(HEAD_ONLY) ?? []).join('');
      body = body.replace(HEAD_ONLY, '');
    }
  } else if (head === undefined) {
    head = (html.slice(0, bodyMatch!.index).match(HEAD_ONLY) ?? []).join('');
  }
  return `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;
}

function metaCharset(body: Buffer): string | undefined {
  const head = body.subarray(0, 2048).toString('latin1');
  return /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
}

function baseOf(href: string | null | undefined, url: URL): URL {
  const base = resolved(href, url);
  return base === undefined ? url : new URL(base);
}

function resolved(href: string | null | undefined, base: URL): string | undefined {
  if (!href || /^\s*(javascript|data|mailto|tel):/i.test(href)) return undefined;
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return undefined;
  }
}

function absolute(links: readonly string[], base: URL): string[] {
  return links
    .slice(0, MAX_LINKS)
    .map((link) => resolved(link, base))
    .filter((link): link is string => link !== undefined);
}

function clean(text: string | null | undefined): string | undefined {
  const value = text?.replace(/\s+/g, ' ').trim();
  return value ? value : undefined;
}
