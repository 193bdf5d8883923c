import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { ServerResponse } from 'node:http';
import { JSON_HEADERS, serializeBytes } from './framing';
import { HTTP_REFUSAL, jsonRpcError, McpHttpException } from './json-rpc-error';
import { send } from './mcp-framing';
import { TransportMetrics } from './transport.metrics';

export const WWW_AUTHENTICATE = 'Bearer realm="agent-data", charset="UTF-8"';

/**
 * Every error on an MCP route becomes a JSON-RPC error envelope served as
 * `application/json` with its HTTP status (400, 401, 403, 404, 405, 406, 413, 415 ...):
 * never SSE, never the REST error shape. 401 carries `WWW-Authenticate`, 405 `Allow`.
 * Anything unexpected is logged and answered 500 / -32603 without details.
 */
@Catch()
export class McpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('McpExceptionFilter');

  constructor(private readonly metrics: TransportMetrics) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    this.reply(exception, host.switchToHttp().getResponse<ServerResponse>());
  }

  /** Answers `exception` on `response` (or ends a response already under way). */
  private reply(exception: unknown, response: ServerResponse): void {
    if (response.headersSent) {
      response.end();
      return;
    }
    let status = 500;
    let code: number = ErrorCode.InternalError;
    let message = 'Internal error; the server log has the details';
    let headers: Record<string, string> = {};
    if (exception instanceof HttpException) {
      status = exception.getStatus();
      code = exception instanceof McpHttpException ? exception.jsonRpcCode : HTTP_REFUSAL;
      message = messageOf(exception);
      if (exception instanceof McpHttpException) headers = { ...exception.headers };
    } else {
      this.logger.error(
        exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
      );
    }
    if (status === 401) headers['WWW-Authenticate'] ??= WWW_AUTHENTICATE;
    send(
      response,
      status,
      JSON_HEADERS,
      serializeBytes(jsonRpcError(null, code, message)),
      headers,
    );
    this.metrics.answered('json');
  }
}

function messageOf(exception: HttpException): string {
  const body = exception.getResponse();
  if (typeof body === 'string') return body;
  const message = (body as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : exception.message;
}
