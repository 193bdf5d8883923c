import {
  ErrorCode,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type LoggingLevel,
  LoggingLevelSchema,
  type RequestId,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/api-key.service';
import type { McpProfile } from '../auth/mcp-routes';
import type { Access } from '../documents/access';
import { PreSerialized, serialize } from '../transport/framing';
import { InFlightLimit } from '../transport/in-flight-limit';
import { jsonRpcError } from '../transport/json-rpc-error';
import { classify, parseBody } from '../transport/json-rpc-messages';
import { batchRefusal, checkUnframedRequest, isModernRequest } from '../transport/modern-request';
import { DEFAULT_PROTOCOL_VERSION, negotiateProtocolVersion } from '../transport/protocol-version';
import { oversizedLine, unparsableLine } from '../transport/stdio-lines';
import { declaresApps } from './apps/app-hosts';
import { type McpContext, NEVER_CANCELLED } from './mcp-context';
import type { JsonRpcAnswer, McpDispatcher } from './mcp.dispatcher';
import { RpcError } from './rpc-error';
import { STDIO_LEGACY_CAPABILITIES } from './server-info';
import type { ChangeSubscriptions } from './subscriptions/change-subscriptions';
import { LISTEN_METHOD } from './subscriptions/listen-request';
import { StdioSubscriptions } from './subscriptions/stdio-subscriptions';

export interface StdioSessionOptions {
  readonly dispatcher: McpDispatcher;
  readonly profile: McpProfile;
  readonly principal: Principal;
  readonly access: Access;
  /**
   * Writes one protocol message (a line of JSON, newline included) to stdout; `false` once
   * more waits in the process to be written than it should (the client reads slowly).
   */
  readonly write: (line: string) => boolean;
  /** Calls `resume` once, when what waited to be written has been (see {@link write}). */
  readonly onDrain: (resume: () => void) => void;
  /** Stops (`true`) or resumes (`false`) reading stdin. */
  readonly backpressure?: (paused: boolean) => void;
  /** Change notifications (both eras); without them the session offers none. */
  readonly subscriptions?: ChangeSubscriptions;
}

/**
 * One MCP client on stdin/stdout (docs/mcp.md): newline-delimited JSON-RPC, both eras on the
 * same stream, decided per message as on HTTP. A request whose `_meta` names a stateless
 * revision is answered by the 2026-07-28 rules (envelope checked, no handshake); anything
 * else by the 2025 rules, whose `initialize` fixes the version the later requests speak.
 * Requests run concurrently (answers may come out of order, matched by id);
 * `notifications/cancelled` aborts the named request, whose answer is then never sent, as
 * the revisions ask. Progress notifications go out on the same stream, and so do change
 * notifications: `subscriptions/listen` (2026) and `resources/subscribe` (2025), see
 * {@link StdioSubscriptions}.
 */
export class McpStdioSession {
  private legacyVersion = DEFAULT_PROTOCOL_VERSION;
  /** The 2025 client declared MCP Apps in its `initialize`: the stream is its connection. */
  private legacyApps = false;
  /** The least severe `notifications/message` the 2025 client asked for (`logging/setLevel`). */
  private logLevel: LoggingLevel = 'debug';
  private readonly running = new Map<RequestId, AbortController>();
  private readonly limit: InFlightLimit;
  private readonly settled = new Set<Promise<void>>();
  private readonly listeners: StdioSubscriptions | undefined;

  constructor(private readonly options: StdioSessionOptions) {
    this.limit = new InFlightLimit(options.backpressure);
    if (options.subscriptions !== undefined) {
      this.listeners = new StdioSubscriptions(options.subscriptions, options.principal, {
        send: (message) => this.send(message),
        onDrain: (resume) => options.onDrain(resume),
        warn: (data) => this.log('warning', data),
      });
    }
  }

  /** Handles one line read from stdin. */
  receive(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.send(unparsableLine(error));
      return;
    }
    const work = this.handle(value).catch(() => undefined);
    this.settled.add(work);
    void work.finally(() => this.settled.delete(work));
  }

  /** A line over the size limit, dropped unread. */
  oversized(bytes: number, limit: number): void {
    this.send(oversizedLine(bytes, limit));
  }

  /** Resolves once every request received so far has been answered. */
  async drain(): Promise<void> {
    while (this.settled.size > 0) await Promise.all([...this.settled]);
  }

  /** Aborts every running request and ends every listener (the client went away). */
  cancelAll(): void {
    for (const controller of this.running.values()) controller.abort();
    this.listeners?.endAll();
  }

  private async handle(value: unknown): Promise<void> {
    if (Array.isArray(value)) {
      if (isModernRequest({}, value)) {
        const refused = batchRefusal();
        if (refused.kind === 'refused') void this.send(refused.error);
        return;
      }
      const parsed = parseBody(value);
      if (!parsed.ok) {
        return void this.send(jsonRpcError(null, ErrorCode.InvalidRequest, parsed.reason));
      }
      const answers = await this.limit.run(() =>
        this.options.dispatcher.answerAll(parsed.messages, this.legacyContext(undefined)),
      );
      if (answers.length > 0) this.send(answers);
      return;
    }
    const message = classify(value);
    switch (message.kind) {
      case 'request':
        return this.request(message.message);
      case 'notification':
        return this.notification(message.message);
      case 'invalid':
        return void this.send(jsonRpcError(message.id, ErrorCode.InvalidRequest, message.reason));
      case 'response':
        return; // This server sends no requests; a response to one is dropped.
    }
  }

  private async request(request: JSONRPCRequest): Promise<void> {
    // A listener answers only when it ends: it is not a running request, and holds no slot.
    if (this.listeners && request.method === LISTEN_METHOD && isModernRequest({}, request)) {
      const checked = checkUnframedRequest(request);
      if (checked.kind === 'refused') return void this.send(checked.error);
      if (checked.kind !== 'request') return;
      const refused = await this.listeners.listen(checked.request);
      if (refused !== undefined) this.send(refused);
      return;
    }
    const controller = new AbortController();
    this.running.set(request.id, controller);
    try {
      const answer = await this.limit.run(() => this.answer(request, controller.signal));
      if (answer !== undefined && !controller.signal.aborted) this.send(answer);
    } finally {
      if (this.running.get(request.id) === controller) this.running.delete(request.id);
    }
  }

  private async answer(
    request: JSONRPCRequest,
    signal: AbortSignal,
  ): Promise<JsonRpcAnswer | undefined> {
    const { dispatcher } = this.options;
    if (isModernRequest({}, request)) {
      const checked = checkUnframedRequest(request);
      if (checked.kind === 'refused') return checked.error;
      if (checked.kind !== 'request') return undefined;
      return dispatcher.answerModern(checked.request, {
        ...this.base(),
        protocolVersion: checked.envelope.protocolVersion,
        era: 'modern',
        signal,
        apps: declaresApps(checked.envelope.clientCapabilities),
      });
    }
    if (request.method === 'initialize') {
      const requested = request.params?.protocolVersion;
      const answer = await dispatcher.answer(request, this.legacyContext(signal));
      if ('result' in answer && typeof requested === 'string') {
        this.legacyVersion = negotiateProtocolVersion(requested);
        this.legacyApps = declaresApps(request.params?.capabilities);
      }
      return this.listeners && 'result' in answer ? offeringSubscribe(answer) : answer;
    }
    const listeners = this.listeners;
    if (listeners && request.method === 'logging/setLevel') return this.setLevel(request);
    if (listeners && LEGACY_SUBSCRIPTIONS.has(request.method)) {
      try {
        const result =
          request.method === 'resources/subscribe'
            ? await listeners.subscribe(request)
            : listeners.unsubscribe(request);
        return { jsonrpc: '2.0', id: request.id, result };
      } catch (error) {
        if (!(error instanceof RpcError)) throw error;
        return jsonRpcError(request.id, error.code, error.detail, error.data);
      }
    }
    return dispatcher.answer(request, this.legacyContext(signal));
  }

  /**
   * `logging/setLevel` (2025): the session offers `logging` with its subscriptions, whose one
   * log message says they were dropped for falling behind.
   */
  private setLevel(request: JSONRPCRequest): JsonRpcAnswer {
    const parsed = SetLevelRequestSchema.safeParse({
      method: request.method,
      params: request.params,
    });
    if (!parsed.success) {
      return jsonRpcError(
        request.id,
        ErrorCode.InvalidParams,
        `Invalid params: params.level must be one of ${LoggingLevelSchema.options.join(', ')}`,
      );
    }
    this.logLevel = parsed.data.params.level;
    return { jsonrpc: '2.0', id: request.id, result: {} };
  }

  private log(level: LoggingLevel, data: Record<string, unknown>): void {
    const order = LoggingLevelSchema.options;
    if (order.indexOf(level) < order.indexOf(this.logLevel)) return;
    this.send({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level, logger: 'agent-data', data },
    });
  }

  private notification(notification: JSONRPCNotification): void {
    if (notification.method !== 'notifications/cancelled') return;
    const id = (notification.params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof id !== 'string' && typeof id !== 'number') return;
    if (this.listeners?.cancel(id) === true) return;
    this.running.get(id)?.abort();
  }

  private legacyContext(signal: AbortSignal | undefined): McpContext {
    return {
      ...this.base(),
      protocolVersion: this.legacyVersion,
      era: 'legacy',
      signal: signal ?? NEVER_CANCELLED,
      apps: this.legacyApps,
    };
  }

  private base(): Pick<McpContext, 'profile' | 'principal' | 'access' | 'notify'> {
    const { profile, principal, access } = this.options;
    return { profile, principal, access, notify: (notification) => this.send(notification) };
  }

  /** Writes one message; `false` when the client reads slower than messages come. */
  private send(payload: JsonRpcAnswer | JsonRpcAnswer[] | JSONRPCNotification | object): boolean {
    return this.options.write(`${serialize(payload)}\n`);
  }
}

/** The 2025 methods a stdio session answers itself: its subscriptions. */
const LEGACY_SUBSCRIPTIONS: ReadonlySet<string> = new Set([
  'resources/subscribe',
  'resources/unsubscribe',
]);

/**
 * An `initialize` answer whose capabilities offer `resources/subscribe` (stdio only), and
 * `logging` for the warning that subscriptions were dropped.
 */
function offeringSubscribe(answer: JsonRpcAnswer): JsonRpcAnswer {
  if (!('result' in answer)) return answer;
  const result = (
    answer.result instanceof PreSerialized ? JSON.parse(answer.result.json) : answer.result
  ) as Record<string, unknown>;
  // The resources' capability changes; the rest (the MCP Apps extension, when declared) stays.
  const capabilities = {
    ...(result.capabilities as Record<string, unknown>),
    resources: STDIO_LEGACY_CAPABILITIES.resources,
    logging: STDIO_LEGACY_CAPABILITIES.logging,
  };
  return { ...answer, result: { ...result, capabilities } };
}
