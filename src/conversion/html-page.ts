import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

/**
 * An HTML page read once for every way HTML comes in: the web source's crawl, MCP's
 * `ingest_document`, and `.html` files of `agent-data import` and of the folder and git
 * sources (docs/sources.md says how the main content is chosen and how that was measured).
 */
export interface HtmlPage {
  /** The `content` of the page's `<meta name="robots">` (and `agent-data-sources`), joined. */
  readonly robots: string;
  /**
   * Links of the page, absolute, in order, without `rel="nofollow"` ones; none for a page
   * read without a URL (a file) that names no absolute `<base>`.
   */
  readonly links: readonly string[];
  /** `<link rel="canonical">`, absolute. */
  readonly canonical?: string;
  /**
   * The main content as markdown and its title. Computed when asked (Readability is the
   * costly part and a page that asks not to be indexed never needs it); once only, as it
   * takes the page's tree apart.
   */
  content(): { readonly body: string; readonly title?: string };
}

/** Links read from one page at most: a page of more is a listing, not a page to crawl from. */
export const MAX_LINKS = 5000;
/** The longest title taken from a page: a heading longer than this is a paragraph set large. */
const MAX_TITLE_CHARS = 500;

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
 * Reads an HTML page fetched from `url`, or a file when there is none. Links (and image
 * sources) are made absolute against `<base>`, else the URL, first, from the whole page:
 * navigation is how a crawl finds pages. A file has no URL: its relative links stay as they
 * are written (they name files beside it), unless an absolute `<base>` says where they lead.
 * The content is what remains once what is never content goes (scripts, navigation, forms;
 * the site's header, footer and side bar): the page's `<main>` when it marks one, else what
 * Readability finds (the page's body when it finds nothing). Its title is the content's first
 * `<h1>`, else Readability's, else `<title>`.
 */
export function readHtml(html: string, url?: URL): HtmlPage {
  const { document } = parseHTML(wellFormed(html));
  const robots = [...document.querySelectorAll('meta[name][content]')]
    .filter((m) => /^(robots|agent-data-sources)$/i.test(m.getAttribute('name') ?? ''))
    .map((m) => m.getAttribute('content'))
    .join(',');
  const base = baseOf(document.querySelector('base[href]')?.getAttribute('href'), url);
  const links: string[] = [];
  let canonical: string | undefined;
  if (base !== undefined) {
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
    canonical = resolved(
      document.querySelector('link[rel~="canonical"][href]')?.getAttribute('href'),
      base,
    );
  }
  let taken: { body: string; title?: string } | undefined;
  return {
    robots,
    links,
    canonical,
    content: () => (taken ??= mainContent(document)),
  };
}

type Document = ReturnType<typeof parseHTML>['document'];

function mainContent(document: Document): { body: string; title?: string } {
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
  return {
    body: markdownOf(content).trim(),
    title: (title ?? pageTitle)?.slice(0, MAX_TITLE_CHARS),
  };
}

/** HTML as markdown, headings `#` and code fenced, as written in the knowledge base. */
export function markdownOf(html: string): string {
  return new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' }).turndown(html);
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

/** The charset a `Content-Type` names, if any. */
export function charsetOf(contentType: string): string | undefined {
  return /;\s*charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType)?.[1];
}

/** Whether bytes served without a type read as an HTML page (a doctype or an opening tag). */
export function looksLikeHtml(body: Buffer): boolean {
  return /^\s*<(!doctype\s+html|html|head|body)\b/i.test(body.subarray(0, 2048).toString('latin1'));
}

/** The charset an HTML page names in a `<meta>` near its start, if any. */
export function metaCharset(body: Buffer): string | undefined {
  const head = body.subarray(0, 2048).toString('latin1');
  return /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
}

/**
 * Text in its charset (UTF-8 by default); bytes that are not valid in it become U+FFFD,
 * as a browser shows them, rather than keep a page with one bad byte out.
 */
export function decodeText(bytes: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    // An unknown charset label: UTF-8 is the web's default and the best remaining guess.
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** The `<base>` against the URL, else the URL; without a URL only an absolute `<base>`. */
function baseOf(href: string | null | undefined, url: URL | undefined): URL | undefined {
  if (url === undefined) {
    if (!href || !/^\s*https?:\/\//i.test(href)) return undefined;
    try {
      return new URL(href.trim());
    } catch {
      return undefined;
    }
  }
  const base = resolved(href, url);
  return base === undefined ? url : new URL(base);
}

/** `href` made absolute against `base`; nothing for scripts, data, mail and phone links. */
export function resolved(href: string | null | undefined, base: URL): string | undefined {
  if (!href || /^\s*(javascript|data|mailto|tel):/i.test(href)) return undefined;
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return undefined;
  }
}

function clean(text: string | null | undefined): string | undefined {
  const value = text?.replace(/\s+/g, ' ').trim();
  return value ? value : undefined;
}
