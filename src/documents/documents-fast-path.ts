import { type DoorRoute, frontDoor, type RouteHandlers } from '../common/front-door';
import type { FrontDoor, RequestObserver } from '../common/http-server';

/** The routes of DocumentsController's `list` and `get`, as they register their paths. */
const LIST: DoorRoute = { method: 'GET', path: '/documents' };
const ITEM: DoorRoute = { method: 'GET', path: '/documents/*id' };
const ITEM_PREFIX = '/documents/';
/**
 * DocumentsController's literal GET routes under `/documents/`, declared ahead of the
 * document route: Express routes `/documents/changes` and `/documents/folders`, in any
 * case, to them, never to `*id`.
 */
const LITERAL_ROUTES = new Set(['changes', 'folders']);
/** The last segments of routes of their own under a document (`/documents/{id}/links`). */
const ITEM_ROUTES = new Set(['history', 'links', 'backlinks', 'neighbourhood']);
/** What makes `parseurl` (Express's path reader) leave its fast path for `url.parse`. */
const SLOW_PARSE = /[\t\n\f\r #\u00a0\ufeff]/;

/**
 * The two hottest admin reads ahead of Express's router (src/common/front-door.ts):
 * `GET /documents` (a listing) and `GET /documents/{id}` (one document), answered by their
 * DocumentsController routes with the routes' guards and filters and Nest's Express
 * reply (`res.json`, with Express's freshness check against the `ETag`), on Express's request
 * and response prototypes.
 *
 * Everything else goes on to Express, unchanged: other methods (HEAD included), another
 * case (`/Documents/...`, which Express also matches), a trailing slash or an empty
 * segment, a segment that does not decode, `.../history`, `.../links`, `.../backlinks`,
 * `.../neighbourhood`, `/documents/changes`, `/documents/folders` and
 * `/documents/links/broken` (routes of their own, declared ahead of the document route;
 * Express matches them before decoding, so `/documents/%63hanges` is the document
 * `changes`), and a URL that Express reads another way (a fragment, white space).
 */
export function documentsFastPath(
  handlers: RouteHandlers,
  observers: readonly RequestObserver[],
): FrontDoor {
  const door = frontDoor(handlers, {
    observers,
    routes: [LIST],
    express: true,
    match: (path) => {
      if (!path.startsWith(ITEM_PREFIX)) return undefined;
      const id = itemSegments(path);
      return id === undefined ? undefined : { route: ITEM, params: { id } };
    },
  });
  // Express reads such a URL with url.parse (a fragment dropped, and more): left to it.
  return (request, response) => !SLOW_PARSE.test(request.url ?? '') && door(request, response);
}

/**
 * The decoded segments of `/documents/{id}` as Express's router would give them, or
 * `undefined` for a path this door leaves to it.
 */
function itemSegments(path: string): string[] | undefined {
  const raw = path.slice(ITEM_PREFIX.length).split('/');
  const last = raw[raw.length - 1];
  if (ITEM_ROUTES.has(last.toLowerCase())) return undefined;
  if (raw.length === 1 && LITERAL_ROUTES.has(last.toLowerCase())) return undefined;
  if (raw.length === 2 && `${raw[0]}/${last}`.toLowerCase() === 'links/broken') return undefined;
  const segments: string[] = [];
  for (const segment of raw) {
    if (segment === '') return undefined;
    if (!segment.includes('%')) {
      segments.push(segment);
      continue;
    }
    try {
      segments.push(decodeURIComponent(segment));
    } catch {
      return undefined;
    }
  }
  return segments;
}
