import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * A JSON-RPC error answer to one request. The SDK's `McpError` prefixes its message with
 * "MCP error <code>: " for local display; the wire message is the plain `detail`, so the
 * SDK client (which adds that prefix itself) does not show it twice.
 */
export class RpcError extends McpError {
  constructor(
    code: ErrorCode,
    readonly detail: string,
    data?: unknown,
  ) {
    super(code, detail, data);
  }
}
