import { HttpException } from '@nestjs/common';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

export { jsonRpcError, type JsonRpcErrorEnvelope } from './json-rpc-envelope';

/**
 * The JSON-RPC code of an answer refused at the HTTP level (401, 403, 404, 405, 406, 413,
 * 415, a bad protocol-version header). The SDK's own transport answers these with -32000,
 * the first of JSON-RPC's implementation-defined server errors; its enum calls that value
 * `ConnectionClosed`, which is not what it means here, hence the name.
 */
export const HTTP_REFUSAL = ErrorCode.ConnectionClosed;

/**
 * An HTTP refusal on an MCP route, carrying the JSON-RPC code of its body and any headers
 * the status calls for (`Allow` on 405). The MCP exception filter writes it.
 */
export class McpHttpException extends HttpException {
  constructor(
    status: number,
    message: string,
    readonly jsonRpcCode: number = HTTP_REFUSAL,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message, status);
  }
}

/** 405 with the `Allow` header listing what the route does accept. */
export function methodNotAllowed(method: string, allow: string): McpHttpException {
  return new McpHttpException(
    405,
    `Method Not Allowed: ${method} is not supported here (allowed: ${allow})`,
    HTTP_REFUSAL,
    { Allow: allow },
  );
}
