import { DomainError, ErrorCode } from '../../common/domain-error';
import {
  charsetOf,
  decodeText,
  looksLikeHtml,
  metaCharset,
  readHtml,
} from '../../conversion/html-page';
import type { FetchedPage } from '../../outbound/safe-fetch';

/** The text of a fetched page, ready to store as a document body. */
export interface PageText {
  readonly text: string;
  /** The title of an HTML page's content: its first `<h1>`, else its `<title>`. */
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

/**
 * Decodes a page by its charset (Content-Type, else a `<meta charset>`, else UTF-8) and
 * turns it into text: HTML reduced to its main content as markdown, as the web source
 * reads pages ({@link readHtml}); text types kept as they are. Binary or unknown media
 * types, and pages with no text, are UPSTREAM_ERROR.
 */
export function pageText(page: FetchedPage): PageText {
  const type = page.contentType.split(';')[0];
  let mediaType = type.trim().toLowerCase();
  if (mediaType === '') mediaType = looksLikeHtml(page.body) ? 'text/html' : 'text/plain';
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
  const charset = charsetOf(page.contentType) ?? (isHtml ? metaCharset(page.body) : undefined);
  const decodedText = decodeText(page.body, charset);
  if (decodedText.includes('\u0000')) throw upstream('the page holds binary data, not text');
  if (!isHtml) {
    const text = decodedText.replace(/\n{3,}/g, '\n\n').trim();
    if (text === '') throw upstream('the page has no text content');
    return { text, title: undefined, mediaType };
  }
  const { body, title } = readHtml(decodedText, new URL(page.finalUrl)).content();
  if (body === '') throw upstream('the page has no text content');
  return { text: body, title, mediaType };
}

function upstream(message: string): DomainError {
  return new DomainError(ErrorCode.UPSTREAM_ERROR, message);
}
