import { ExpressAdapter } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AppConfig } from '../config/app-config';

/** Per-request work every answer needs (request id, access log, metrics), whoever answers. */
export type RequestObserver = (request: Request, response: Response) => void;

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
 * For a front door: leaves on `request` what Express's router leaves on a request it routes
 * to the route template `route` with `params` (the observers read them), then runs the
 * observers, as Express would run them as middleware.
 */
export function enterRoute(
  request: Request,
  response: Response,
  route: string,
  params: Request['params'],
  observers: readonly RequestObserver[],
): void {
  request.originalUrl = request.url;
  request.baseUrl = '';
  (request as Request & { route: { path: string } }).route = { path: route };
  request.params = params;
  for (const observe of observers) observe(request, response);
}

/**
 * Answers a request before Express sees it (true), or leaves it to Express (false): the
 * fast paths of the MCP endpoints and of the hottest admin reads.
 */
export type FrontDoor = (request: IncomingMessage, response: ServerResponse) => boolean;

/**
 * Express under Nest, on an HTTP server with explicit limits for slow and idle clients
 * (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_KEEPALIVE_TIMEOUT_MS), checked
 * every second: a client that trickles its headers is dropped within seconds, not after
 * Node's defaults (60 s, checked every 30 s).
 */
export class TunedExpressAdapter extends ExpressAdapter {
  private frontDoors: readonly FrontDoor[] = [];

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
