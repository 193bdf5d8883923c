import { All, Controller, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { ErrorCode, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { LOCAL_PRINCIPAL, type Principal } from '../auth/api-key.service';
import { describeLimit, RateLimits } from '../auth/rate-limits';
import { AccessPolicyService } from '../documents/access-policy.service';
import { AppConfig } from '../config/app-config';
import type { Access } from '../documents/access';
import { parseAccept } from '../transport/accept-negotiation';
import { HTTP_REFUSAL, jsonRpcError, methodNotAllowed } from '../transport/json-rpc-error';
import { readMcpBody } from '../transport/mcp-body';
import { McpExceptionFilter } from '../transport/mcp-exception.filter';
import { McpFraming, type OpenedReply, notAcceptable } from '../transport/mcp-framing';
import type { ReplyChannel } from '../transport/reply-channel';
import type { McpReply } from '../transport/mcp-reply';
import { batchRefusal, checkModernMessage, isModernRequest } from '../transport/modern-request';
import { OriginGuard } from '../transport/origin.guard';
import {
  isModernVersion,
  LATEST_PROTOCOL_VERSION,
  requestProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../transport/protocol-version';
import { classify, type IncomingMessage, parseBody } from '../transport/json-rpc-messages';
import { appsSessionId, declaresApps, isAppsSession } from './apps/app-hosts';
import { McpAuthGuard, unknownPath } from './mcp-auth.guard';
import { type McpContext, NEVER_CANCELLED } from './mcp-context';
import { McpEndpoint, RouteProfile, SecretRoute } from './mcp-endpoint.decorator';
import { McpDispatcher } from './mcp.dispatcher';
import type { McpRequest } from './mcp-request';
import { PROFILE_TOOLS } from './profiles';
import { MCP_ROUTES, type McpProfile } from '../auth/mcp-routes';
import { SERVER_VERSION } from '../common/version';
import { SERVER_NAME } from './server-info';
import { ChangeSubscriptions } from './subscriptions/change-subscriptions';
import { listenOverHttp } from './subscriptions/http-listen';
import { LISTEN_METHOD } from './subscriptions/listen-request';

/** Methods an MCP endpoint answers, for `Allow` on 405. */
const ALLOWED_METHODS = 'GET, POST';

/**
 * The MCP Streamable HTTP endpoints (docs/mcp.md), one handler per route, the profile from
 * route metadata. POST carries JSON-RPC; GET answers a JSON info document (405 to a client
 * that wants an SSE stream: this server keeps none); PUT, PATCH, DELETE are 405.
 * Guards: Origin (403), then API key or secret token (401 / 403 / 404). Each handler has
 * {@link McpFraming} negotiate the Accept header first and frame its answer (JSON or one
 * SSE event) last; the filter turns every error into a JSON-RPC envelope. Handlers take
 * `@Res()`: they write the response themselves.
 */
@Controller()
@UseGuards(OriginGuard, McpAuthGuard)
@UseFilters(McpExceptionFilter)
export class McpController {
  constructor(
    private readonly config: AppConfig,
    private readonly dispatcher: McpDispatcher,
    private readonly limits: RateLimits,
    private readonly framing: McpFraming,
    private readonly policy: AccessPolicyService,
    private readonly subscriptions: ChangeSubscriptions,
  ) {}

  @All([...MCP_ROUTES.internal])
  @McpEndpoint('internal')
  internal(
    @Req() request: McpRequest,
    @RouteProfile() profile: McpProfile,
    @Res() response: ServerResponse,
  ): Promise<void> {
    return this.serve(request, response, profile);
  }

  @All([...MCP_ROUTES.readonly])
  @McpEndpoint('readonly')
  readonly(
    @Req() request: McpRequest,
    @RouteProfile() profile: McpProfile,
    @Res() response: ServerResponse,
  ): Promise<void> {
    return this.serve(request, response, profile);
  }

  @All([...MCP_ROUTES.gpt])
  @McpEndpoint('gpt')
  gpt(
    @Req() request: McpRequest,
    @RouteProfile() profile: McpProfile,
    @Res() response: ServerResponse,
  ): Promise<void> {
    return this.serve(request, response, profile);
  }

  @All([...MCP_ROUTES['gpt-full']])
  @McpEndpoint('gpt-full')
  gptFull(
    @Req() request: McpRequest,
    @RouteProfile() profile: McpProfile,
    @Res() response: ServerResponse,
  ): Promise<void> {
    return this.serve(request, response, profile);
  }

  /**
   * `/gpt-mcp/{GPT_ROUTE_TOKEN}/mcp`: the gpt profile without an API key, for clients that
   * cannot send headers (ChatGPT connectors). The route template, not the path, labels
   * metrics, and logged URLs are redacted, so the token never leaves the process.
   */
  @All('gpt-mcp/:token/mcp')
  @SecretRoute()
  secret(
    @Req() request: McpRequest,
    @RouteProfile() profile: McpProfile,
    @Res() response: ServerResponse,
  ): Promise<void> {
    return this.serve(request, response, profile);
  }

  // Unknown paths in the MCP families answer a JSON-RPC 404 rather than the REST shape.
  // Declared last: Express tries routes in order.
  @All('mcp*rest')
  unknownMcpPath(@Res() _response: unknown): never {
    throw unknownPath();
  }

  @All(['gpt-mcp/*rest', 'readonly/*rest', 'gpt/*rest', 'gpt-full/*rest'])
  unknownGptPath(@Res() _response: unknown): never {
    throw unknownPath();
  }

  /** Answers a request to `profile`'s endpoint that passed the guards. */
  private async serve(
    request: McpRequest,
    response: ServerResponse,
    profile: McpProfile,
  ): Promise<void> {
    const opened = this.framing.open(request, response);
    this.framing.write(response, await this.handle(request, response, profile, opened), opened);
  }

  private handle(
    request: McpRequest,
    response: ServerResponse,
    profile: McpProfile,
    opened: OpenedReply,
  ): Promise<McpReply> {
    switch (request.method) {
      case 'POST':
        return this.post(request, response, profile, opened);
      case 'GET':
      case 'HEAD':
        // The 2026 revision has no GET stream and no info document: 405 (docs/mcp.md).
        if (speaksModern(request)) throw methodNotAllowed(request.method, 'POST');
        return Promise.resolve(this.info(request, profile));
      case 'OPTIONS':
        return Promise.resolve(preflight());
      default:
        throw methodNotAllowed(request.method, speaksModern(request) ? 'POST' : ALLOWED_METHODS);
    }
  }

  private async post(
    request: McpRequest,
    response: ServerResponse,
    profile: McpProfile,
    { framing, channel }: OpenedReply,
  ): Promise<McpReply> {
    const body = await readMcpBody(request, this.config.maxRequestBytes);
    if (!body.ok) {
      return rpc(400, jsonRpcError(null, ErrorCode.ParseError, `Parse error: ${body.problem}`));
    }
    if (isModernRequest(request.headers, body.value)) {
      return this.postModern(request, response, profile, body.value, { framing, channel });
    }
    const protocolVersion = requestProtocolVersion(request.headers);
    const parsed = parseBody(body.value);
    if (!parsed.ok) return rpc(400, jsonRpcError(null, ErrorCode.InvalidRequest, parsed.reason));
    const [first] = parsed.messages;
    if (!parsed.batch && first.kind === 'invalid') {
      return rpc(400, jsonRpcError(first.id, ErrorCode.InvalidRequest, first.reason));
    }
    if (parsed.messages.every((m) => m.kind === 'notification' || m.kind === 'response')) {
      return { kind: 'accepted' };
    }
    // Refuse before running anything whose answer could not be delivered.
    if (framing === 'not-acceptable') throw notAcceptable();
    const calls = parsed.messages.filter(
      (m) => m.kind === 'request' && m.message.method === 'tools/call',
    ).length;
    const limited = await this.rateLimited(
      request,
      profile,
      calls,
      parsed.batch ? null : idOfMessage(first),
    );
    if (limited !== undefined) return limited;
    channel?.start();
    const principal = request.principal ?? LOCAL_PRINCIPAL;
    const session = request.headers['mcp-session-id'];
    const opensApps = parsed.messages.some(
      (m) =>
        m.kind === 'request' &&
        m.message.method === 'initialize' &&
        declaresApps(m.message.params?.capabilities),
    );
    const answers = await this.dispatcher.answerAll(parsed.messages, {
      profile,
      principal,
      access: this.policy.accessOf(principal, 'mcp'),
      protocolVersion,
      era: 'legacy',
      // A 2025 client that disconnects has not cancelled: its calls run to the end.
      signal: NEVER_CANCELLED,
      notify: channel?.streams ? (notification) => channel.notify(notification) : undefined,
      apps: isAppsSession(session),
    });
    // An Apps host's handshake: its session id carries the declaration (see app-hosts.ts).
    const headers = opensApps
      ? { 'Mcp-Session-Id': isAppsSession(session) ? (session as string) : appsSessionId() }
      : undefined;
    return { kind: 'rpc', status: 200, payload: parsed.batch ? answers : answers[0], headers };
  }

  /**
   * A POST of the 2026-07-28 era (docs/mcp.md): one message, its envelope and mirrored headers
   * checked (400, always as JSON, with the request's id), notifications accepted (202), a
   * method this server does not have 404. Closing the response cancels the request.
   */
  private async postModern(
    request: McpRequest,
    response: ServerResponse,
    profile: McpProfile,
    body: unknown,
    { framing, channel }: OpenedReply,
  ): Promise<McpReply> {
    const checked = Array.isArray(body)
      ? batchRefusal()
      : checkModernMessage(request.headers, classify(body));
    if (checked.kind === 'refused')
      return { kind: 'json', status: checked.status, payload: checked.error };
    if (checked.kind === 'notification') return { kind: 'accepted' };
    if (checked.request.method === LISTEN_METHOD) {
      return listenOverHttp(
        this.subscriptions,
        request,
        response,
        checked.request,
        request.principal ?? LOCAL_PRINCIPAL,
        this.config.mcpSseKeepAliveMs,
      );
    }
    const id = checked.request.id;
    if (framing === 'not-acceptable') {
      return {
        kind: 'json',
        status: 406,
        payload: jsonRpcError(id, HTTP_REFUSAL, notAcceptable().message),
      };
    }
    const missing = this.dispatcher.modernMethodNotFound(checked.request);
    if (missing !== undefined) return { kind: 'json', status: 404, payload: missing };
    const calls = checked.request.method === 'tools/call' ? 1 : 0;
    const limited = await this.rateLimited(request, profile, calls, checked.request.id);
    if (limited !== undefined) return limited;
    channel?.start();
    const answer = await this.dispatcher.answerModern(
      checked.request,
      new ModernContext(
        profile,
        request.principal ?? LOCAL_PRINCIPAL,
        checked.envelope.protocolVersion,
        channel,
        this.policy,
        declaresApps(checked.envelope.clientCapabilities),
      ),
    );
    return rpc(200, answer);
  }

  /**
   * 429 when the principal's `tools/call` budget is spent (docs/oauth.md), as JSON whatever the
   * Accept, before any call runs: a batch is taken whole or refused whole.
   */
  private async rateLimited(
    request: McpRequest,
    profile: McpProfile,
    calls: number,
    id: RequestId | null,
  ): Promise<McpReply | undefined> {
    if (calls === 0 || !this.limits.enabled('tool_call')) return undefined;
    const principal = request.principal ?? LOCAL_PRINCIPAL;
    const decision = await this.limits.consume('tool_call', principal, profile, calls);
    if (decision.allowed) return undefined;
    return {
      kind: 'json',
      status: 429,
      headers: { 'Retry-After': String(decision.retryAfterSeconds) },
      payload: jsonRpcError(
        id,
        HTTP_REFUSAL,
        `Too Many Requests: ${principal.name} is over its limit of ${describeLimit(decision.limit, 'tool calls')}; retry in ${decision.retryAfterSeconds} s`,
        { code: 'RATE_LIMITED', retry_after_seconds: decision.retryAfterSeconds },
      ),
    };
  }

  /** GET: what this endpoint is. A client asking only for an SSE stream gets 405. */
  private info(request: McpRequest, profile: McpProfile): McpReply {
    const accept = parseAccept(request.headers.accept);
    if (accept.wantsSse && !accept.wantsJson) {
      throw methodNotAllowed('GET', 'POST');
    }
    const tools = PROFILE_TOOLS[profile];
    return {
      kind: 'json',
      status: 200,
      payload: {
        name: SERVER_NAME,
        version: SERVER_VERSION,
        transport: 'streamable-http',
        profile,
        tool_count: tools.length,
        tools,
        protocol_versions: SUPPORTED_PROTOCOL_VERSIONS,
        latest_protocol_version: LATEST_PROTOCOL_VERSION,
        post_sse: this.config.mcpPostSse,
        usage: 'POST JSON-RPC 2.0 requests here with Content-Type: application/json',
      },
    };
  }
}

/** Whether a GET / DELETE names a stateless-era revision in its MCP-Protocol-Version header. */
function speaksModern(request: McpRequest): boolean {
  const header = request.headers['mcp-protocol-version'];
  return typeof header === 'string' && isModernVersion(header.trim());
}

function rpc(status: number, payload: unknown): McpReply {
  return { kind: 'rpc', status, payload };
}

/** CORS preflight (the Origin guard has already refused foreign origins). */
function preflight(): McpReply {
  return {
    kind: 'empty',
    status: 204,
    headers: {
      Allow: `${ALLOWED_METHODS}, OPTIONS`,
      'Access-Control-Allow-Methods': `${ALLOWED_METHODS}, OPTIONS`,
      'Access-Control-Allow-Headers':
        'Content-Type, Accept, Authorization, X-API-Key, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID',
      'Access-Control-Max-Age': '600',
    },
  };
}

function idOfMessage(message: IncomingMessage): RequestId | null {
  switch (message.kind) {
    case 'request':
      return message.message.id;
    case 'invalid':
      return message.id;
    default:
      return null;
  }
}

/**
 * The context of a 2026-era request. Its signal is made on first use: most answers never
 * look at it. (A class, not an object literal with a getter, which V8 builds slowly.)
 */
class ModernContext implements McpContext {
  readonly era = 'modern';
  readonly notify: McpContext['notify'];

  constructor(
    readonly profile: McpProfile,
    readonly principal: Principal,
    readonly protocolVersion: string,
    private readonly channel: ReplyChannel | undefined,
    policy: AccessPolicyService,
    readonly apps: boolean,
  ) {
    this.notify = channel?.streams ? (notification) => channel.notify(notification) : undefined;
    this.access = policy.accessOf(principal, 'mcp');
  }

  readonly access: Access;

  get signal(): AbortSignal {
    return this.channel?.signal ?? NEVER_CANCELLED;
  }
}
