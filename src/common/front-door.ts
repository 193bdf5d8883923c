import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import {
  type FrontDoor,
  pathOf,
  type RequestObserver,
  type RoutedRequest,
  type RouteHandler,
} from './http-server';

/** One route a door takes: its HTTP method (`ALL` for any) and the path Nest registers. */
export interface DoorRoute {
  readonly method: 'GET' | 'POST' | 'ALL';
  /** The path as the controller's route registers it (`/mcp`, `/documents/*id`). */
  readonly path: string;
}

/** A request taken by a door's matcher: its route, and the params Express would give. */
export interface MatchedRoute {
  readonly route: DoorRoute;
  readonly params: NonNullable<RoutedRequest['params']>;
}

/** Where the route handlers Nest registers are found (TunedExpressAdapter records them). */
export interface RouteHandlers {
  routeHandler(method: string, path: string): RouteHandler | undefined;
  getInstance<T>(): T;
}

export interface FrontDoorOptions {
  /** The request observers Express runs as middleware (request id, access log, metrics). */
  readonly observers: readonly RequestObserver[];
  /** Routes of static paths: a request whose path is exactly one of them is taken. */
  readonly routes: readonly DoorRoute[];
  /**
   * For routes with a parameter or a wildcard: the route and params of a path the door
   * takes, `undefined` to leave the path to Express.
   */
  readonly match?: (path: string) => MatchedRoute | undefined;
  /** Give the request and response Express's prototypes (handlers that use Express's API). */
  readonly express?: boolean;
}

/**
 * A front door: answers requests of some routes ahead of Express's router, with the very
 * handler Nest registered for the route (recorded by the HTTP adapter as Nest registers
 * it): the route's guards (class, method and global ones), interceptors, pipes, parameter
 * decorators, status code, reply and exception filters all run as they do on the routed
 * path, so a guard added to a route, or globally, is never skipped here. What the door
 * saves is Express's middleware chain and the walk over every registered route.
 *
 * A door runs the request observers (request id, access log, metrics) that Express runs as
 * middleware, and no other middleware: it takes only routes that need none. A route whose
 * handler is not registered (a renamed path) is simply left to Express. Anything else goes
 * to Express too.
 */
export function frontDoor(handlers: RouteHandlers, options: FrontDoorOptions): FrontDoor {
  const express = handlers.getInstance<Express>();
  const statics = new Map(options.routes.map((route) => [route.path, route] as const));
  const resolved = new Map<DoorRoute, RouteHandler | null>();
  const handlerOf = (route: DoorRoute): RouteHandler | null => {
    let handler = resolved.get(route);
    if (handler === undefined) {
      // Looked up on the first request: routes are registered when the application starts.
      handler = handlers.routeHandler(route.method, route.path) ?? null;
      if (handler !== null) resolved.set(route, handler);
    }
    return handler;
  };

  return (request, response) => {
    const path = pathOf(request.url ?? '');
    const fixed = statics.get(path);
    const matched = fixed === undefined ? options.match?.(path) : { route: fixed, params: {} };
    if (matched === undefined) return false;
    const { route, params } = matched;
    if (route.method !== 'ALL' && route.method !== request.method) return false;
    const handler = handlerOf(route);
    if (handler === null) return false;
    if (options.express) {
      // What Express's application leaves on a request it routes.
      const req = request as IncomingMessage & { res?: ServerResponse };
      const res = response as ServerResponse & { req?: IncomingMessage; locals?: object };
      req.res = response;
      res.req = request;
      Object.setPrototypeOf(request, express.request);
      Object.setPrototypeOf(response, express.response);
      res.locals ??= Object.create(null) as object;
    }
    enterRoute(request, response, route.path, params, options.observers);
    // The route's filters answer every error; should writing that answer fail, the socket goes.
    Promise.resolve(
      handler(request, response, (error?: unknown) => error && response.destroy()),
    ).catch(() => response.destroy());
    return true;
  };
}

/**
 * What Express's router leaves on a request it routes to the route template `route` with
 * `params` (the observers and handlers read them), then the observers, as Express would run
 * them as middleware.
 */
function enterRoute(
  request: IncomingMessage,
  response: ServerResponse,
  route: string,
  params: MatchedRoute['params'],
  observers: readonly RequestObserver[],
): void {
  // The fields below make it one; a server's request always has its method and URL.
  const routed = request as RoutedRequest;
  routed.originalUrl = routed.url;
  routed.baseUrl = '';
  routed.route = { path: route };
  routed.params = params;
  for (const observe of observers) observe(routed, response);
}
