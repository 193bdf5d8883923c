import { ExpressAdapter } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AppConfig } from '../config/app-config';

/**
 * A request as routing leaves it: Node's request plus what Express's router sets on a
 * request it routes, which a front door sets too (src/common/front-door.ts). A request
 * Express routed is also Express's Request; one a front door took may keep Node's prototype.
 */
export type RoutedRequest = IncomingMessage & {
  /** Always set on a request a server received (Node types them optional for client messages). */
  method: string;
  url: string;
  originalUrl: string;
  baseUrl: string;
  /** The matched route, once routed: its template (`/documents/*id`) labels the metrics. */
  route?: { path?: unknown };
  /** Route parameters, once routed. */
  params?: Record<string, string | string[] | undefined>;
  /** The request id, set by the access log's observer. */
  id?: string;
};

/** Per-request work every answer needs (request id, access log, metrics), whoever answers. */
export type RequestObserver = (request: RoutedRequest, response: ServerResponse) => void;

/** Runs `observer`, then the next middleware: the observer as Express middleware. */
export function observing(observer: RequestObserver) {
  return (request: Request, response: Response, next: NextFunction): void => {
    observer(request, response);
    next();
  };
}

/** The path of a request URL: what comes before its query. */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Answers a request before Express sees it (true), or leaves it to Express (false): the
 * fast paths of the MCP endpoints and of the hottest admin reads.
 */
export type FrontDoor = (request: IncomingMessage, response: ServerResponse) => boolean;

/** A route's handler as Nest registers it with the HTTP adapter. */
export type RouteHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  next: (error?: unknown) => void,
) => unknown;

/** The HTTP methods Nest registers routes with (`@All` is `all`), as the adapter sees them. */
type RouteMethod = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head' | 'options' | 'all';

/**
 * Express under Nest, on an HTTP server with explicit limits for slow and idle clients
 * (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_KEEPALIVE_TIMEOUT_MS), checked
 * every second: a client that trickles its headers is dropped within seconds, not after
 * Node's defaults (60 s, checked every 30 s).
 */
export class TunedExpressAdapter extends ExpressAdapter {
  private frontDoors: readonly FrontDoor[] = [];
  /** Every route handler Nest registered, by `METHOD path` (for the front doors). */
  private readonly handlers = new Map<string, RouteHandler>();

  /**
   * `answerClientError` answers what Node's HTTP parser refuses before any route sees the
   * request (the transport module's, which knows which paths want a JSON-RPC envelope).
   */
  constructor(
    private readonly config: AppConfig,
    private readonly answerClientError: (error: Error, socket: Socket) => void,
  ) {
    super();
  }

  /** Lets `doors`, in order, answer the requests they want ahead of Express (at bootstrap). */
  setFrontDoors(...doors: FrontDoor[]): void {
    this.frontDoors = doors;
  }

  /**
   * The handler Nest registered for `method` (`GET`, `ALL`, ...) and `path` as written in
   * its route (`/documents/*id`): the whole route (guards, interceptors, pipes, reply,
   * filters), which a front door calls instead of walking Express's router to it.
   */
  routeHandler(method: string, path: string): RouteHandler | undefined {
    return this.handlers.get(`${method.toUpperCase()} ${path}`);
  }

  /**
   * Sets the status as Express's `res.status` does, on any response: the MCP front door's
   * keep Node's prototype (the MCP code uses Node's API only).
   */
  override status(response: ServerResponse, statusCode: number): ServerResponse {
    response.statusCode = statusCode;
    return response;
  }

  // Nest registers each route by calling get/post/.../all with its path and handler.
  override get(...args: unknown[]): unknown {
    return this.register('get', args);
  }
  override post(...args: unknown[]): unknown {
    return this.register('post', args);
  }
  override put(...args: unknown[]): unknown {
    return this.register('put', args);
  }
  override patch(...args: unknown[]): unknown {
    return this.register('patch', args);
  }
  override delete(...args: unknown[]): unknown {
    return this.register('delete', args);
  }
  override head(...args: unknown[]): unknown {
    return this.register('head', args);
  }
  override options(...args: unknown[]): unknown {
    return this.register('options', args);
  }
  override all(...args: unknown[]): unknown {
    return this.register('all', args);
  }

  /** Records a route's handler, then registers it with Express as the adapter would. */
  private register(method: RouteMethod, args: unknown[]): unknown {
    const [path, handler] = args;
    // `get` with one argument reads an Express setting; anything else is a route.
    if (typeof path === 'string' && typeof handler === 'function' && args.length === 2) {
      const key = `${method.toUpperCase()} ${path}`;
      // Express answers a path with the first route registered for it: a door takes that one too.
      if (!this.handlers.has(key)) this.handlers.set(key, handler as RouteHandler);
    }
    const instance = this.getInstance<Record<string, (...a: unknown[]) => unknown>>();
    return instance[method](...args);
  }

  override initHttpServer(): void {
    const express =
      this.getInstance<(request: IncomingMessage, response: ServerResponse) => void>();
    const server = createServer(
      {
        headersTimeout: this.config.httpHeadersTimeoutMs,
        requestTimeout: this.config.httpRequestTimeoutMs,
        keepAliveTimeout: this.config.httpKeepAliveTimeoutMs,
        connectionsCheckingInterval: 1000,
      },
      (request, response) => {
        for (const door of this.frontDoors) if (door(request, response)) return;
        express(request, response);
      },
    );
    server.on('clientError', this.answerClientError);
    this.httpServer = server;
  }
}

export type { Server };
