import { Injectable, Logger } from '@nestjs/common';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  JSONRPC_VERSION,
  ListToolsRequestSchema,
  PingRequestSchema,
  type InitializeResult,
  type JSONRPCRequest,
  type RequestId,
  type Result,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { PreSerialized } from '../transport/framing';
import { negotiateProtocolVersion } from '../transport/protocol-version';
import { jsonRpcError, type JsonRpcErrorEnvelope } from '../transport/json-rpc-error';
import type { McpContext } from './mcp-context';
import type { IncomingMessage } from '../transport/json-rpc-messages';
import { ProfileGuard } from './profile.guard';
import { RpcError } from './rpc-error';
import { instructionsFor, SERVER_NAME, SERVER_VERSION } from './server-info';
import { ToolCaller } from './tool-caller';

/** A JSON-RPC answer; a result may be pre-serialised (see {@link PreSerialized}). */
export type JsonRpcAnswer =
  | { jsonrpc: typeof JSONRPC_VERSION; id: RequestId; result: Result | PreSerialized }
  | JsonRpcErrorEnvelope;

/**
 * JSON-RPC dispatch for one profile's endpoint: `initialize`, `ping`, `tools/list`,
 * `tools/call`. Stateless: every request carries what it needs (profile, key, protocol
 * version), so any replica can answer any request and nothing is kept per connection.
 * Error semantics follow the official SDK: -32601 unknown method, -32602 bad params or
 * unknown tool, -32603 server fault; tool failures are results, not errors.
 */
@Injectable()
export class McpDispatcher {
  private readonly logger = new Logger('McpDispatcher');
  /** `initialize` results by profile and negotiated version: at most 4 × 4, built on first use. */
  private readonly initializeResults = new Map<string, PreSerialized>();

  constructor(
    private readonly profiles: ProfileGuard,
    private readonly tools: ToolCaller,
  ) {}

  /**
   * Answers the requests among `messages`, in order; notifications and client responses
   * get no answer, an invalid message gets -32600.
   */
  async answerAll(
    messages: readonly IncomingMessage[],
    context: McpContext,
  ): Promise<JsonRpcAnswer[]> {
    const answers: JsonRpcAnswer[] = [];
    // One after the other: a batch that writes then reads sees its own writes.
    for (const message of messages) {
      if (message.kind === 'request') answers.push(await this.answer(message.message, context));
      if (message.kind === 'invalid') {
        answers.push(jsonRpcError(message.id, ErrorCode.InvalidRequest, message.reason));
      }
    }
    return answers;
  }

  async answer(request: JSONRPCRequest, context: McpContext): Promise<JsonRpcAnswer> {
    try {
      const result = await this.route(request, context);
      return { jsonrpc: JSONRPC_VERSION, id: request.id, result };
    } catch (error) {
      if (error instanceof RpcError) {
        return jsonRpcError(request.id, error.code, error.detail, error.data);
      }
      this.logger.error(
        `${request.method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      return jsonRpcError(request.id, ErrorCode.InternalError, 'Internal error');
    }
  }

  private async route(
    request: JSONRPCRequest,
    context: McpContext,
  ): Promise<Result | PreSerialized> {
    switch (request.method) {
      case 'initialize':
        return this.initialize(params(InitializeRequestSchema, request), context);
      case 'ping':
        params(PingRequestSchema, request);
        return {};
      case 'tools/list':
        params(ListToolsRequestSchema, request);
        return this.profiles.toolsListResult(context.profile);
      case 'tools/call':
        return this.tools.call(params(CallToolRequestSchema, request), context);
      default:
        throw new RpcError(ErrorCode.MethodNotFound, 'Method not found', {
          method: request.method.slice(0, 100),
        });
    }
  }

  private initialize(
    input: z.infer<typeof InitializeRequestSchema>['params'],
    context: McpContext,
  ): PreSerialized {
    const protocolVersion = negotiateProtocolVersion(input.protocolVersion);
    const key = `${context.profile} ${protocolVersion}`;
    let result = this.initializeResults.get(key);
    if (!result) {
      result = PreSerialized.of(this.initializeResult(protocolVersion, context));
      this.initializeResults.set(key, result);
    }
    return result;
  }

  private initializeResult(protocolVersion: string, context: McpContext): InitializeResult {
    return {
      protocolVersion,
      capabilities: { tools: { listChanged: false } },
      serverInfo: {
        name: SERVER_NAME,
        title: 'Agent Data knowledge base',
        version: SERVER_VERSION,
      },
      instructions: instructionsFor(context.profile),
    };
  }
}

/** The request's params per the SDK's schema for its method, or -32602 naming the problem. */
function params<S extends z.ZodType<{ params?: unknown }>>(
  schema: S,
  request: JSONRPCRequest,
): NonNullable<z.infer<S>['params']> {
  const parsed = schema.safeParse({ method: request.method, params: request.params });
  if (parsed.success) return (parsed.data.params ?? {}) as NonNullable<z.infer<S>['params']>;
  const issue = parsed.error.issues[0];
  const where = ['params', ...issue.path.map(String)].join('.');
  throw new RpcError(ErrorCode.InvalidParams, `Invalid params: ${where}: ${issue.message}`);
}
