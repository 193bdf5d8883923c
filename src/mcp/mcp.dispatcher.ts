import { Injectable, Logger } from '@nestjs/common';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  InitializeRequestSchema,
  JSONRPC_VERSION,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  type InitializeResult,
  type JSONRPCRequest,
  type RequestId,
  type Result,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { faultOf, logFault } from '../common/fault';
import { PreSerialized } from '../transport/framing';
import type { IncomingMessage } from '../transport/json-rpc-messages';
import { jsonRpcError, type JsonRpcErrorEnvelope } from '../transport/json-rpc-error';
import {
  negotiateProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../transport/protocol-version';
import { ClientClosed } from '../transport/reply-channel';
import { APPS_SERVER_EXTENSION, declaresApps } from './apps/app-hosts';
import { AppViews } from './apps/app-views';
import { ArgumentCompleter } from './completion/argument-completer';
import type { McpContext } from './mcp-context';
import { ProfileGuard } from './profile.guard';
import { PromptRegistry } from './prompts/prompt-registry';
import { DocumentResources, ResourceNotFound } from './resources/document-resources';
import { RpcError } from './rpc-error';
import { CAPABILITIES, instructionsFor, MODERN_CAPABILITIES, SERVER_INFO } from './server-info';
import { ToolCaller } from './tool-caller';
import { decorate, MODERN_RESULT_HINTS } from './modern-results';

/** A JSON-RPC answer; a result may be pre-serialised (see {@link PreSerialized}). */
export type JsonRpcAnswer =
  | { jsonrpc: typeof JSONRPC_VERSION; id: RequestId; result: Result | PreSerialized }
  | JsonRpcErrorEnvelope;

type Handler = (
  request: JSONRPCRequest,
  context: McpContext,
) => Promise<Result | PreSerialized> | Result | PreSerialized;

/** The 2025-era code of "resource not found"; 2026-07-28 uses -32602 (its changelog). */
const LEGACY_RESOURCE_NOT_FOUND = -32002;

/**
 * JSON-RPC dispatch for one profile's endpoint, in both eras (docs/mcp.md). Stateless:
 * every request carries what it needs (profile, key, protocol version), so any replica can
 * answer any request and nothing is kept per connection.
 *
 * The two eras share the methods of the knowledge base (tools, resources, prompts,
 * completions). The 2025 era adds `initialize` and `ping`; the 2026 era adds
 * `server/discover`, answers a method it does not have with HTTP 404, and decorates every
 * result with `resultType`, the server's identity and, for listings and reads, caching
 * hints. Error semantics follow the official SDK: -32601 unknown method, -32602 bad params
 * or unknown tool, -32603 server fault; tool failures are results, not errors.
 */
@Injectable()
export class McpDispatcher {
  private readonly logger = new Logger('McpDispatcher');
  /** `initialize` results by profile, negotiated version and Apps host: at most 4 × 4 × 2, built on first use. */
  private readonly initializeResults = new Map<string, PreSerialized>();
  /** 2026 decorations of results that never change (per profile), built on first use. */
  private readonly decorated = new WeakMap<PreSerialized, PreSerialized>();
  private readonly shared: Readonly<Record<string, Handler>>;
  private readonly legacy: Readonly<Record<string, Handler>>;
  private readonly modern: Readonly<Record<string, Handler>>;

  constructor(
    private readonly profiles: ProfileGuard,
    private readonly tools: ToolCaller,
    private readonly resources: DocumentResources,
    private readonly prompts: PromptRegistry,
    private readonly completer: ArgumentCompleter,
    private readonly views: AppViews,
  ) {
    this.shared = {
      'tools/list': (request, context) => {
        params(ListToolsRequestSchema, request);
        return this.profiles.toolsListResult(context.profile, this.apps(context));
      },
      'tools/call': (request, context) =>
        this.tools.call(params(CallToolRequestSchema, request), context),
      'resources/list': async (request, context) => {
        const { cursor } = params(ListResourcesRequestSchema, request);
        const page = await this.resources.list(cursor, context.access);
        // The views lead the first page; the documents' cursors are unchanged.
        if (cursor !== undefined || !this.apps(context)) return page;
        return { ...page, resources: [...this.views.resources(), ...page.resources] };
      },
      'resources/read': (request, context) => {
        const { uri } = params(ReadResourceRequestSchema, request);
        const view = this.apps(context) ? this.views.read(uri) : undefined;
        return view ?? this.resources.read(uri, context.access);
      },
      'resources/templates/list': (request) => {
        noCursor(params(ListResourceTemplatesRequestSchema, request).cursor);
        return this.resources.templatesResult;
      },
      'prompts/list': (request) => {
        noCursor(params(ListPromptsRequestSchema, request).cursor);
        return this.prompts.listResult;
      },
      'prompts/get': (request, context) =>
        this.prompts.get(params(GetPromptRequestSchema, request), context),
      'completion/complete': (request, context) =>
        this.completer.complete(params(CompleteRequestSchema, request), context.access),
    };
    this.legacy = {
      ...this.shared,
      initialize: (request, context) =>
        this.initialize(params(InitializeRequestSchema, request), context),
      ping: (request) => {
        params(PingRequestSchema, request);
        return {};
      },
    };
    this.modern = {
      ...this.shared,
      'server/discover': (_request, context) => ({
        supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        capabilities: capabilitiesFor(this.apps(context), MODERN_CAPABILITIES),
        instructions: instructionsFor(context.profile),
      }),
    };
  }

  /**
   * Answers the requests among `messages` (a 2025-era POST body), in order; notifications
   * and client responses get no answer, an invalid message gets -32600.
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

  /** One 2025-era request. */
  async answer(request: JSONRPCRequest, context: McpContext): Promise<JsonRpcAnswer> {
    const handler = Object.hasOwn(this.legacy, request.method)
      ? this.legacy[request.method]
      : undefined;
    if (handler === undefined) return methodNotFound(request);
    return this.run(handler, request, context, (result) => result);
  }

  /**
   * The 404 answer of a 2026-era request whose method this server does not have, or
   * `undefined` when it has it: decided before any work starts.
   */
  modernMethodNotFound(request: JSONRPCRequest): JsonRpcErrorEnvelope | undefined {
    return Object.hasOwn(this.modern, request.method) ? undefined : methodNotFound(request);
  }

  /**
   * One 2026-era request: its envelope and headers checked by the transport, its method one
   * that {@link modernMethodNotFound} accepted.
   */
  async answerModern(request: JSONRPCRequest, context: McpContext): Promise<JsonRpcAnswer> {
    const handler = Object.hasOwn(this.modern, request.method)
      ? this.modern[request.method]
      : undefined;
    if (handler === undefined) return methodNotFound(request);
    const hints = Object.hasOwn(MODERN_RESULT_HINTS, request.method)
      ? MODERN_RESULT_HINTS[request.method]
      : undefined;
    return this.run(handler, request, context, (result) => {
      if (!(result instanceof PreSerialized) || hints?.cacheScope !== 'public') {
        return decorate(result, hints);
      }
      let done = this.decorated.get(result);
      if (done === undefined) {
        done = decorate(result, hints) as PreSerialized;
        this.decorated.set(result, done);
      }
      return done;
    });
  }

  private async run(
    handler: Handler,
    request: JSONRPCRequest,
    context: McpContext,
    finish: (result: Result | PreSerialized) => Result | PreSerialized,
  ): Promise<JsonRpcAnswer> {
    try {
      const result = await handler(request, context);
      return { jsonrpc: JSONRPC_VERSION, id: request.id, result: finish(result) };
    } catch (error) {
      if (error instanceof RpcError) {
        return jsonRpcError(request.id, error.code, error.detail, error.data);
      }
      if (error instanceof ResourceNotFound) {
        const code = context.era === 'modern' ? ErrorCode.InvalidParams : LEGACY_RESOURCE_NOT_FOUND;
        return jsonRpcError(request.id, code, 'Resource not found', { uri: error.uri });
      }
      const fault = faultOf(error);
      if (fault !== undefined) {
        logFault(this.logger, request.method, error);
        return jsonRpcError(
          request.id,
          ErrorCode.InternalError,
          `Service unavailable: ${fault.message}`,
          fault.toJSON(),
        );
      }
      if (context.signal.aborted && context.signal.reason instanceof ClientClosed) {
        // Nobody is left to read an answer; the transport writes nothing more.
        return jsonRpcError(request.id, ErrorCode.InternalError, 'Request cancelled');
      }
      this.logger.error(
        `${request.method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      return jsonRpcError(request.id, ErrorCode.InternalError, 'Internal error');
    }
  }

  /**
   * Whether `context` is an MCP Apps host that the views can be offered to: other clients
   * see exactly what they saw before the views existed.
   */
  private apps(context: McpContext): boolean {
    return context.apps === true && this.views.available;
  }

  private initialize(
    input: z.infer<typeof InitializeRequestSchema>['params'],
    context: McpContext,
  ): PreSerialized {
    const protocolVersion = negotiateProtocolVersion(input.protocolVersion);
    // The handshake's own capabilities decide: the host declares the extension right here.
    const apps = declaresApps(input.capabilities) && this.views.available;
    const key = `${context.profile} ${protocolVersion}${apps ? ' apps' : ''}`;
    let result = this.initializeResults.get(key);
    if (!result) {
      result = PreSerialized.of({
        protocolVersion,
        capabilities: capabilitiesFor(apps),
        serverInfo: SERVER_INFO,
        instructions: instructionsFor(context.profile),
      } satisfies InitializeResult);
      this.initializeResults.set(key, result);
    }
    return result;
  }
}

/**
 * The server's capabilities (`base`: the 2025 era's, or those `server/discover` gives), with the
 * MCP Apps extension for a host that declared it.
 */
function capabilitiesFor(apps: boolean, base: ServerCapabilities = CAPABILITIES) {
  return apps ? { ...base, extensions: APPS_SERVER_EXTENSION } : base;
}

function methodNotFound(request: JSONRPCRequest): JsonRpcErrorEnvelope {
  return jsonRpcError(request.id, ErrorCode.MethodNotFound, 'Method not found', {
    method: request.method.slice(0, 100),
  });
}

/** Listings this server never pages: any cursor is one it did not issue. */
function noCursor(cursor: string | undefined): void {
  if (cursor !== undefined) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      'Invalid params: cursor is not one this server issued (this list has one page); list again without a cursor',
    );
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
