import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { HTTP_REFUSAL } from './json-rpc-error';

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
      ? { jsonrpc: '2.0', id: null, error: { code: HTTP_REFUSAL, message } }
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
