import type { NestExpressApplication } from '@nestjs/platform-express';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { Express, Request, Response } from 'express';
import { AdminGuard } from '../auth/admin.guard';
import { enterRoute, type FrontDoor, pathOf, type RequestObserver } from '../common/http-server';
import { RestExceptionFilter } from '../common/rest-exception.filter';
import { DocumentsController } from './documents.controller';

const LIST_PATH = '/documents';
const ITEM_PREFIX = '/documents/';
/** The route templates the Nest routes register; the HTTP metrics label requests by them. */
const LIST_ROUTE = '/documents';
const ITEM_ROUTE = '/documents/*id';
/** What makes `parseurl` (Express's path reader) leave its fast path for `url.parse`. */
const SLOW_PARSE = /[\t\n\f\r #\u00a0\ufeff]/;

/**
 * The two hottest admin reads without Express's router or Nest's:
 * `GET /documents` (a listing) and `GET /documents/{id}` (one document). The HTTP server
 * hands every request to this front door after the MCP one; a GET whose path is exactly
 * one of these is answered here with what the Nest route runs, in the same order: the
 * request observers, {@link AdminGuard}, the {@link DocumentsController} method, Nest's
 * Express reply (`res.json`, with Express's freshness check against the `ETag`), and
 * {@link RestExceptionFilter} for any error. The request and response get Express's
 * prototypes, as Express gives them, so everything the controller and the filter call
 * behaves as on the routed path.
 *
 * Everything else goes on to Express, unchanged: other methods (HEAD included), another
 * case (`/Documents/...`, which Express also matches), a trailing slash or an empty
 * segment, a segment that does not decode, `.../history` (a route of its own, declared
 * ahead of the document route), and a URL that Express reads another way (a fragment,
 * white space).
 */
export function documentsFastPath(
  app: NestExpressApplication,
  observers: readonly RequestObserver[],
): FrontDoor {
  const express = app.getHttpAdapter().getInstance() as Express;
  const adapter = app.getHttpAdapter();
  const guard = app.get(AdminGuard);
  const controller = app.get(DocumentsController);
  const filter = new RestExceptionFilter();

  const serve = async (request: Request, response: Response, id: string[] | undefined) => {
    const context = new ExecutionContextHost([request, response]);
    try {
      await guard.canActivate(context);
      // As Nest's route does: the route's status before the handler (which may set 304),
      // then the reply without one.
      adapter.status(response, 200);
      const result =
        id === undefined
          ? await controller.list(request.query as Record<string, unknown>)
          : await controller.get(id, request.headers['if-none-match'], response);
      adapter.reply(response, result);
    } catch (error) {
      filter.catch(error, context);
    }
  };

  return (incoming, outgoing) => {
    if (incoming.method !== 'GET') return false;
    const url = incoming.url ?? '';
    // Express reads such a URL with url.parse (a fragment dropped, and more): left to it.
    if (SLOW_PARSE.test(url)) return false;
    const path = pathOf(url);
    let id: string[] | undefined;
    if (path !== LIST_PATH) {
      if (!path.startsWith(ITEM_PREFIX)) return false;
      id = itemSegments(path);
      if (id === undefined) return false;
    }
    const request = incoming as Request;
    const response = outgoing as Response;
    // What Express's application and router leave on a request they route here.
    request.res = response;
    response.req = request;
    Object.setPrototypeOf(request, express.request);
    Object.setPrototypeOf(response, express.response);
    response.locals ??= Object.create(null) as Record<string, unknown>;
    if (id === undefined) enterRoute(request, response, LIST_ROUTE, {}, observers);
    else enterRoute(request, response, ITEM_ROUTE, { id: id as unknown as string }, observers);
    serve(request, response, id).catch(() => response.destroy());
    return true;
  };
}

/**
 * The decoded segments of `/documents/{id}` as Express's router would give them, or
 * `undefined` for a path this door leaves to it.
 */
function itemSegments(path: string): string[] | undefined {
  const raw = path.slice(ITEM_PREFIX.length).split('/');
  const last = raw[raw.length - 1];
  if (last.toLowerCase() === 'history') return undefined;
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
