/**
 * `/documents/<id>` and a suffix (`/links`, `/move`…): each segment of the id encoded. Where the
 * id's spelling would be read as another route (a last segment `history`, `restore`, `move`,
 * `links`, `backlinks` or `neighbourhood`; a top-level `bulk`, `changes` or `folders`;
 * `links/broken`), in any case of their letters (routes are), one character is
 * percent-encoded, as docs/documents.md says. Pure: the
 * console and the command line both build their paths with it.
 */
export function documentPath(id: string, suffix = ''): string {
  const segments = id.split('/').map(encodeURIComponent);
  if (segments.length === 1) {
    const [only] = segments;
    const literal = ['bulk', 'changes', 'folders'].includes(only.toLowerCase());
    return `/documents/${literal ? `%${only.charCodeAt(0).toString(16)}${only.slice(1)}` : only}${suffix}`;
  }
  const last = segments.pop()!;
  // A last segment naming a route of its own, and the id `links/broken` (a route too).
  const reserved =
    ['history', 'restore', 'move', 'links', 'backlinks', 'neighbourhood'].includes(
      last.toLowerCase(),
    ) ||
    (segments.length === 1 && `${segments[0]}/${last}`.toLowerCase() === 'links/broken');
  return `/documents/${segments.join('/')}${reserved ? '%2F' : '/'}${last}${suffix}`;
}
