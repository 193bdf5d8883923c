import type { FoundLink } from './markdown-links';

/** A span of a body and what to write there instead. */
export interface Rewrite {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/**
 * `body` with each span replaced. Spans given twice (reference links sharing one definition)
 * are written once; spans never overlap otherwise.
 */
export function rewritten(body: string, rewrites: readonly Rewrite[]): string {
  const byStart = new Map(rewrites.map((r) => [r.start, r]));
  let result = body;
  for (const rewrite of [...byStart.values()].sort((a, b) => b.start - a.start)) {
    result = result.slice(0, rewrite.start) + rewrite.text + result.slice(rewrite.end);
  }
  return result;
}

/** The path from the folder of `fromId` to `toId`: `a/b/x.md` to `a/c/y.md` is `../c/y.md`. */
export function relativePath(fromId: string, toId: string): string {
  const from = fromId.split('/').slice(0, -1);
  const to = toId.split('/');
  let shared = 0;
  while (shared < from.length && shared < to.length - 1 && from[shared] === to[shared]) shared++;
  return [...from.slice(shared).map(() => '..'), ...to.slice(shared)].join('/');
}

/**
 * How `link`, written in `sourceId`, names `targetId` in the style it was written in: a
 * markdown link as a path relative to its document (or from the root when it was written
 * from the root), without `.md` if it was written without; a URI as `kb://` and the id. Not
 * for wikilinks, which take the shortest path that resolves ({@link wikilinkPaths}).
 */
export function targetText(link: FoundLink, sourceId: string, targetId: string): string {
  const path = withoutMdIf(!/\.md$/i.test(link.target), targetId);
  if (link.kind === 'uri') return `kb://${encodePath(path, false)}`;
  if (link.target.startsWith('/')) return `/${encodePath(path, link.angle)}`;
  let relative = withoutMdIf(!/\.md$/i.test(link.target), relativePath(sourceId, targetId));
  // A path written explicitly relative stays so (a bare path would be matched by its tail).
  if (/^\.\.?\//.test(link.target) && !relative.startsWith('../')) relative = `./${relative}`;
  return encodePath(relative, link.angle);
}

/**
 * The paths a wikilink to `targetId` may be written with, shortest first: its last `least`
 * segments (or all, when it has fewer), then one more, up to the whole id, without `.md` (as
 * wikilinks are written).
 */
export function wikilinkPaths(targetId: string, least = 1): string[] {
  const segments = withoutMdIf(true, targetId).split('/');
  const first = Math.min(Math.max(least, 1), segments.length);
  return segments
    .slice(first - 1)
    .map((_, i) => segments.slice(segments.length - first - i).join('/'));
}

function withoutMdIf(strip: boolean, path: string): string {
  return strip && /\.md$/i.test(path) ? path.slice(0, -3) : path;
}

/**
 * A path as a link destination: what would end it or change its meaning encoded (white space,
 * parentheses, `<` and `>`, `#`, `?`, `%`); between `<` and `>` only those two.
 */
function encodePath(path: string, angle: boolean): string {
  return angle
    ? path.replace(/[<>]/g, (c) => encodeURIComponent(c))
    : path.replace(/[\s()<>#?%]/g, (c) => encodeURIComponent(c));
}
