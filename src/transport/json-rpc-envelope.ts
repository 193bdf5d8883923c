import type { JSONRPC_VERSION, RequestId } from '@modelcontextprotocol/sdk/types.js';

// JSON-RPC error envelopes, without the SDK's runtime or Nest: `agent-data mcp` relaying to
// a server builds its few refusals from here, and importing the SDK's types module would
// build all of its zod schemas (some 16 MB and 60 ms, a third of that process).

/**
 * JSON-RPC 2.0 error codes, the values of the SDK's `ErrorCode` (json-rpc-envelope.spec.ts
 * compares them).
 */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INTERNAL_ERROR = -32603;

/**
 * A JSON-RPC error envelope. The SDK's `JSONRPCErrorResponse` type makes `id` optional;
 * JSON-RPC 2.0 requires `id: null` when the request's id could not be read, so the wire
 * shape is spelled out here.
 */
export interface JsonRpcErrorEnvelope {
  jsonrpc: typeof JSONRPC_VERSION;
  id: RequestId | null;
  error: { code: number; message: string; data?: unknown };
}

export function jsonRpcError(
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcErrorEnvelope {
  return {
    jsonrpc: '2.0',
    id,
    error: data === undefined ? { code, message } : { code, message, data },
  };
}
