import DOMPurify from 'dompurify';
import { marked } from 'marked';
import type { Link } from './api';
import { folderOf, href } from './route';

/**
 * A document body as safe HTML: marked renders it (GitHub-flavoured: tables, fenced code),
 * DOMPurify removes everything that could run (script, event handlers, javascript: links,
 * forms, iframes). Relative links to other documents open them inside the console; links
 * elsewhere open in a new tab without the console's address.
 */
export function renderMarkdown(body: string, documentId: string, links?: readonly Link[]): string {
  resolved = new Map(
    (links ?? []).flatMap((link) =>
      link.document_id === null || link.kind !== 'markdown'
        ? []
        : [[link.target, link.document_id] as const],
    ),
  );
  const html = marked.parse(withLinks(body, links ?? []), { async: false, gfm: true });
  return sanitize(html, documentId);
}

/**
 * The body with each resolved wikilink and `kb://` URI written as a markdown link to its
 * document's page (a browser opens neither), where the server found it (its offsets; never
 * in code). A link whose text is not where the offsets say (the body changed meanwhile) is
 * left as it is.
 */
function withLinks(body: string, links: readonly Link[]): string {
  let result = body;
  for (const link of [...links].sort((a, b) => b.start - a.start)) {
    if (link.document_id === null || link.kind === 'markdown') continue;
    const written = body.slice(link.start, link.end);
    const expected = link.kind === 'wikilink' ? /^!?\[\[.*\]\]$/s : /^(<kb:|kb:|\[)/i;
    if (!expected.test(written)) continue;
    const text = link.label.replace(/[\\[\]*_`<>]/g, (c) => `\\${c}`);
    result = `${result.slice(0, link.start)}[${text}](<${href('doc', link.document_id)}>)${result.slice(link.end)}`;
  }
  return result;
}

/** The documents the links of the page being rendered resolve to, by their target as written. */
let resolved = new Map<string, string>();
let currentDocument = '';
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    const target = node.getAttribute('href')!;
    const inside = resolvedLink(target) ?? documentLink(target, currentDocument);
    if (inside !== undefined) {
      node.setAttribute('href', inside);
    } else if (/^https?:/i.test(target)) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
  }
  if (node.tagName === 'IMG') {
    // Images load only from this server (the Content-Security-Policy says so too).
    node.setAttribute('loading', 'lazy');
  }
});

function sanitize(html: string, documentId: string): string {
  currentDocument = documentId;
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe'],
    FORBID_ATTR: ['style'],
  });
}

/** The page of the document a rendered link's address resolves to, as the server said. */
function resolvedLink(target: string): string | undefined {
  const [path, fragment] = target.split('#', 2);
  const id = resolved.get(safeDecode(path));
  return id === undefined
    ? undefined
    : href('doc', id, { at: fragment ? safeDecode(fragment) : undefined });
}

/** `../guide/setup.md#install` seen from `docs/intro/a.md` → the console's address of `docs/guide/setup.md`. */
export function documentLink(target: string, from: string): string | undefined {
  if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) {
    return undefined;
  }
  if (target.startsWith('#')) return undefined;
  const [path, fragment] = target.split('#', 2);
  if (path === '') return undefined;
  const base = path.startsWith('/') ? [] : folderOf(from).split('/').filter(Boolean);
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') base.pop();
    else base.push(safeDecode(segment));
  }
  const id = base.join('/');
  return id === ''
    ? undefined
    : href('doc', id, { at: fragment ? safeDecode(fragment) : undefined });
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A search snippet: the text escaped, the query words the server bolded (`**word**`) marked. */
export function snippetHtml(snippet: string): string {
  const escaped = snippet
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
  return escaped.replace(/\*\*([^*]+)\*\*/g, '<mark>$1</mark>');
}
