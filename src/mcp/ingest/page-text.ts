import { compile } from 'html-to-text';
import { DomainError, ErrorCode } from '../../common/domain-error';
import type { FetchedPage } from '../../outbound/safe-fetch';

/** The text of a fetched page, ready to store as a document body. */
export interface PageText {
  readonly text: string;
  /** The HTML `<title>`, when the page is HTML and has one. */
  readonly title: string | undefined;
  /** The media type the text was read as (`text/html`, `text/plain`...). */
  readonly mediaType: string;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const TEXT_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/x-yaml',
  'application/yaml',
]);

const headings = [1, 2, 3, 4, 5, 6].map((level) => ({
  selector: `h${level}`,
  format: 'markdownHeading',
  options: { level },
}));

/**
 * HTML → text with html-to-text: headings become markdown headings (so the document's
 * derived title and the chunker see the structure), links keep their text only, images,
 * navigation and scripts are dropped, no hard wrapping.
 */
const htmlToText = compile({
  wordwrap: false,
  formatters: {
    markdownHeading(elem, walk, builder, options) {
      builder.openBlock({ leadingLineBreaks: 2 });
      builder.addLiteral(`${'#'.repeat(Number(options.level) || 1)} `);
      walk(elem.children, builder);
      builder.closeBlock({ trailingLineBreaks: 2 });
    },
  },
  selectors: [
    ...headings,
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'nav', format: 'skip' },
    { selector: 'noscript', format: 'skip' },
    { selector: 'svg', format: 'skip' },
    { selector: 'form', format: 'skip' },
  ],
});

const titleToText = compile({ wordwrap: false });

/**
 * Decodes a page by its charset (Content-Type, else a `<meta charset>`, else UTF-8) and
 * turns it into text: HTML converted, text types kept as they are. Binary or unknown media
 * types, and pages with no text, are UPSTREAM_ERROR.
 */
export function pageText(page: FetchedPage): PageText {
  const [type, ...parameters] = page.contentType.split(';');
  let mediaType = type.trim().toLowerCase();
  const head = page.body.subarray(0, 2048).toString('latin1');
  if (mediaType === '')
    mediaType = /^\s*<(!doctype\s+html|html|head|body)\b/i.test(head) ? 'text/html' : 'text/plain';
  const isHtml = HTML_TYPES.has(mediaType);
  if (
    !isHtml &&
    !mediaType.startsWith('text/') &&
    !TEXT_TYPES.has(mediaType) &&
    !mediaType.endsWith('+json')
  ) {
    throw upstream(
      `unsupported content type ${mediaType}: only HTML and text pages can be ingested`,
    );
  }
  const charset =
    parameters.map((p) => /^\s*charset\s*=\s*"?([\w.:-]+)"?\s*$/i.exec(p)?.[1]).find(Boolean) ??
    (isHtml ? /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1] : undefined);
  const decodedText = decode(page.body, charset);
  if (decodedText.includes('\u0000')) throw upstream('the page holds binary data, not text');

  const text = (isHtml ? htmlToText(decodedText) : decodedText).replace(/\n{3,}/g, '\n\n').trim();
  if (text === '') throw upstream('the page has no text content');
  const rawTitle = isHtml ? /<title[^>]*>([\s\S]*?)<\/title>/i.exec(decodedText)?.[1] : undefined;
  const title =
    rawTitle === undefined ? undefined : titleToText(rawTitle).replace(/\s+/g, ' ').trim();
  return { text, title: title || undefined, mediaType };
}

function decode(body: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    // An unknown charset label: UTF-8 is the web's default and the best remaining guess.
    return new TextDecoder('utf-8').decode(body);
  }
}

function upstream(message: string): DomainError {
  return new DomainError(ErrorCode.UPSTREAM_ERROR, message);
}
