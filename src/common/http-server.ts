import { ExpressAdapter } from '@nestjs/platform-express';
import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { AppConfig } from '../config/app-config';

/**
 * Express under Nest, on an HTTP server with explicit limits for slow and idle clients
 * (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_KEEPALIVE_TIMEOUT_MS), checked
 * every second: a client that trickles its headers is dropped within seconds, not after
 * Node's defaults (60 s, checked every 30 s).
 */
export class TunedExpressAdapter extends ExpressAdapter {
  constructor(private readonly config: AppConfig) {
    super();
  }

  override initHttpServer(): void {
    const server = createServer(
      {
        headersTimeout: this.config.httpHeadersTimeoutMs,
        requestTimeout: this.config.httpRequestTimeoutMs,
        keepAliveTimeout: this.config.httpKeepAliveTimeoutMs,
        connectionsCheckingInterval: 1000,
      },
      this.getInstance(),
    );
    server.on('clientError', answerClientError);
    this.httpServer = server;
  }
}

/** MCP routes answer every error as a JSON-RPC envelope (SPEC §6); the others as REST. */
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
