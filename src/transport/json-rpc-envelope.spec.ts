import { ErrorCode, JSONRPC_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { INTERNAL_ERROR, INVALID_REQUEST, jsonRpcError, PARSE_ERROR } from './json-rpc-envelope';

describe('json-rpc-envelope', () => {
  it("holds the SDK's error codes", () => {
    expect([PARSE_ERROR, INVALID_REQUEST, INTERNAL_ERROR]).toEqual([
      ErrorCode.ParseError,
      ErrorCode.InvalidRequest,
      ErrorCode.InternalError,
    ]);
  });

  it("builds the SDK's JSON-RPC version, with data only when given", () => {
    expect(jsonRpcError(1, PARSE_ERROR, 'x')).toEqual({
      jsonrpc: JSONRPC_VERSION,
      id: 1,
      error: { code: -32700, message: 'x' },
    });
    expect(jsonRpcError(null, INVALID_REQUEST, 'y', { a: 1 }).error).toEqual({
      code: -32600,
      message: 'y',
      data: { a: 1 },
    });
  });
});
