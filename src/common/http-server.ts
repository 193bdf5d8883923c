import { ExpressAdapter } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import {
  createServer,
  type IncomingMessage,
  STATUS_CODES,
  type Server,
  type ServerResponse,
} from 'node:http';
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

  constructor(private readonly config: AppConfig) {
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
    server.on('clientError', answerClientError);
    this.httpServer = server;
  }
}

/** MCP routes answer every error as a JSON-RPC envelope (docs/mcp.md); the others as REST. */
const MCP_PATH = /^\/(mcp([-/?].*)?|readonly\/|gpt\/|gpt-full\/|gpt-mcp\/)/;

/**
 * What Node's HTTP parser refuses before any route sees the request (headers over the
 * limit, a malformed request line, a client too slow to send its request) is answered with
 * a JSON body like every other error, then the connection closes: 431, 400 or 408.
 */
export function answerClientError(
  error: Error & { code?: string; rawPacket?: Buffer },
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 431
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'HPE_TIMEOUT'
        ? 408
        : 400;
  const message =
    status === 431
      ? 'Request Header Fields Too Large: the request headers exceed the server limit (16 KiB)'
      : status === 408
        ? 'Request Timeout: the request was not received in time'
        : 'Bad Request: the request could not be parsed as HTTP/1.1';
  // The request line usually survives what broke the headers: it tells which edge answers.
  const path = /^[A-Z]+ (\S+) HTTP\/1\.[01]\r?\n/.exec(
    error.rawPacket?.toString('latin1') ?? '',
  )?.[1];
  const body = JSON.stringify(
    path !== undefined && MCP_PATH.test(path)
      ? { jsonrpc: '2.0', id: null, error: { code: -32000, message } }
      : { error: { code: REST_CODES[status], message } },
  );
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

const REST_CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  408: 'REQUEST_TIMEOUT',
  431: 'HEADERS_TOO_LARGE',
};

export type { Server };
