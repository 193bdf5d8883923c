/**
 * Where the console is: the part of `location.hash` after `#/`. A document id travels with
 * each segment percent-encoded, so ids holding `#`, `?`, `%`, spaces or non-ASCII letters
 * survive the address bar; the query after `?` carries the page's own parameters.
 */
export interface Route {
  readonly page: string;
  /** The id or folder after the page name, decoded. */
  readonly target: string;
  readonly query: URLSearchParams;
}

export function currentRoute(): Route {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path, search = ''] = splitOnce(hash, '?');
  const [page, rest = ''] = splitOnce(path, '/');
  const target = rest === '' ? '' : rest.split('/').map(safeDecode).join('/');
  return { page: page || 'browse', target, query: new URLSearchParams(search) };
}

/** The address of `page` for `target` (an id or a folder) and query parameters. */
export function href(
  page: string,
  target = '',
  query: Record<string, string | undefined> = {},
): string {
  const encoded = target === '' ? '' : `/${target.split('/').map(encodeURIComponent).join('/')}`;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(name, value);
  }
  const search = params.toString();
  return `#/${page}${encoded}${search ? `?${search}` : ''}`;
}

export function go(
  page: string,
  target = '',
  query: Record<string, string | undefined> = {},
): void {
  location.hash = href(page, target, query);
}

function splitOnce(text: string, separator: string): [string, string?] {
  const at = text.indexOf(separator);
  return at === -1 ? [text] : [text.slice(0, at), text.slice(at + 1)];
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The folder of an id (`a/b/c.md` → `a/b`), `''` at the top level. */
export function folderOf(id: string): string {
  const at = id.lastIndexOf('/');
  return at === -1 ? '' : id.slice(0, at);
}
