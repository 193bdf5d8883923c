import type { FoundLink } from './markdown-links';

/**
 * What a link asks for (docs/documents.md, "Links between documents"):
 * - `id`: exactly that document id (`kb://` URIs, and paths starting with `/`, `./` or `../`),
 *   `.md` added or taken off when only that form exists;
 * - `path`: any document whose id ends with these segments (other paths, wikilinks), the one
 *   nearest the linking document when several do; a wikilink that matches no path also
 *   tries document titles (`title`).
 * `null` for what cannot name a document: an external URL, a path above the root, a folder.
 */
export type LinkTarget =
  | { readonly rule: 'id'; readonly id: string }
  | { readonly rule: 'path'; readonly suffix: string; readonly title: string | null };

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\\]/;
/** A `.` or `..` segment of a path. */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;
/** An empty, `.` or `..` segment of a path: what no document id holds. */
const NOT_AN_ID = /(?:^|\/)(?:\.\.?)?(?:\/|$)/;
/** Longest id in UTF-8 bytes; a text of at most a third as many UTF-16 units never exceeds it. */
const MAX_ID_BYTES = 512;

/** What `link`, written in the document `sourceId`, asks for. */
export function targetOf(link: FoundLink, sourceId: string): LinkTarget | null {
  if (link.kind === 'uri') return idTarget(link.target);
  const written = link.target.trim();
  if (written === '' || FORBIDDEN.test(written)) return null;
  if (link.kind === 'markdown' && (SCHEME.test(written) || written.startsWith('//'))) return null;
  if (written.endsWith('/')) return null;
  if (written.startsWith('/')) return idTarget(written.replace(/^\/+/, ''));
  if (DOT_SEGMENT.test(written)) {
    const id = relativeId(written, sourceId);
    return id === null ? null : idTarget(id);
  }
  const path = written.includes('//')
    ? written
        .split('/')
        .filter((s) => s !== '')
        .join('/')
    : written;
  const suffix = fold(withoutMd(path));
  return {
    rule: 'path',
    suffix,
    title: link.kind === 'wikilink' ? titleKey(written) : null,
  };
}

function idTarget(id: string): LinkTarget | null {
  const trimmed = id.trim();
  if (trimmed === '' || FORBIDDEN.test(trimmed) || NOT_AN_ID.test(trimmed)) return null;
  if (trimmed.length > MAX_ID_BYTES / 3 && Buffer.byteLength(trimmed) > MAX_ID_BYTES) return null;
  return { rule: 'id', id: trimmed };
}

/**
 * The id a path with `.` or `..` segments names from the document `sourceId`; `null` above
 * the top. Most are `../` or `./` first and plain segments after: cut from the id's text;
 * others walk the segments.
 */
function relativeId(written: string, sourceId: string): string | null {
  let folderEnd = sourceId.lastIndexOf('/');
  let at = 0;
  for (;;) {
    if (written.startsWith('../', at)) {
      if (folderEnd === -1) return null;
      folderEnd = sourceId.lastIndexOf('/', folderEnd - 1);
      at += 3;
    } else if (written.startsWith('./', at)) at += 2;
    else break;
  }
  const rest = written.slice(at);
  if (rest !== '' && !rest.startsWith('/') && !rest.includes('//') && !DOT_SEGMENT.test(rest)) {
    return folderEnd === -1 ? rest : `${sourceId.slice(0, folderEnd)}/${rest}`;
  }
  const folder = sourceId.split('/').slice(0, -1);
  const segments = written.split('/');
  for (let k = 0; k < segments.length; k++) {
    const segment = segments[k];
    if (segment === '..') {
      if (folder.length === 0) return null;
      folder.pop();
    } else if (segment !== '.' && segment !== '') folder.push(segment);
  }
  return folder.join('/');
}

/**
 * The keys of the link table (kb_links.keys) a link is found by: `=id` for an id; `~path` for
 * a path (folded); for a wikilink, `%path` when its title is its path (most are: `[[Backup
 * runbook]]`), else `~path` and `@title`. One key a link where one is enough: each is an entry
 * of the GIN index that every write of the document pays for. A document's backlinks are the
 * links holding one of its own keys ({@link documentKeys}).
 */
export function keysOf(target: LinkTarget): string[] {
  if (target.rule === 'id') return [`=${target.id}`];
  if (target.title === null) return [`~${target.suffix}`];
  return target.title === target.suffix
    ? [`%${target.suffix}`]
    : [`~${target.suffix}`, `@${target.title}`];
}

/**
 * The keys under which links to `documentId` (titled `title`) are found: its id and its twin
 * with or without `.md`; every tail of its path (`c`, `b/c`, `a/b/c` for `a/b/c.md`), as a
 * path (`~`) and as a wikilink's path (`%`); its title, as a wikilink's title (`@`, `%`).
 * Which of those links really resolve to it is link-resolution.ts's to say.
 */
export function documentKeys(
  documentId: string,
  title: string,
): {
  id: string;
  twin: string;
  /** The tails of the path, shortest last, without their prefix. */
  suffixes: string[];
  /** The title as titles are compared, without its prefix. */
  title: string;
  /** Every key above, with its prefix. */
  all: string[];
} {
  const segments = fold(withoutMd(documentId)).split('/');
  const suffixes = segments.map((_, i) => segments.slice(i).join('/'));
  const key = titleKey(title);
  return {
    id: `=${documentId}`,
    twin: `=${twinOf(documentId)}`,
    suffixes,
    title: key,
    all: [
      `=${documentId}`,
      `=${twinOf(documentId)}`,
      ...suffixes.flatMap((s) => [`~${s}`, `%${s}`]),
      `@${key}`,
      `%${key}`,
    ],
  };
}

/** The same id with `.md` taken off, or put on. */
export function twinOf(id: string): string {
  return /\.md$/i.test(id) ? id.slice(0, -3) : `${id}.md`;
}

/**
 * The name a path is looked up by: its last segment, folded, without `.md` (what the
 * `kb_document_name` index of the migrations holds for each document).
 */
export function nameOf(path: string): string {
  return fold(withoutMd(path.slice(path.lastIndexOf('/') + 1)));
}

/** Whether `documentId` ends with the folded path `suffix`, whole segments, `.md` optional. */
export function endsWithPath(documentId: string, suffix: string): boolean {
  const folded = fold(withoutMd(documentId));
  return (
    folded === suffix ||
    (folded.length > suffix.length &&
      folded.endsWith(suffix) &&
      folded.charCodeAt(folded.length - suffix.length - 1) === 47) // '/'
  );
}

/**
 * A title as titles are compared: white space trimmed and collapsed, ASCII letters in lower
 * case (`kb_title_key` in the migrations, the same on both sides).
 */
export function titleKey(title: string): string {
  // Most titles have no white space to trim or collapse.
  if (!/^[ \t\n\r\f\v]|[\t\n\r\f\v]| [ \t\n\r\f\v]|[ \t\n\r\f\v]$/.test(title)) return fold(title);
  return fold(
    title.replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, '').replace(/[ \t\n\r\f\v]+/g, ' '),
  );
}

/**
 * ASCII letters in lower case, nothing else: what PostgreSQL's `translate` does whatever the
 * database's collation, where `lower` would not be the same everywhere.
 */
export function fold(text: string): string {
  return /[A-Z]/.test(text) ? text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase()) : text;
}

function withoutMd(path: string): string {
  return /\.md$/i.test(path) ? path.slice(0, -3) : path;
}
