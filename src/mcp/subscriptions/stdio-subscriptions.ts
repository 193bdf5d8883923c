import {
  ErrorCode,
  type JSONRPCRequest,
  type RequestId,
  type Result,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../auth/api-key.service';
import { jsonRpcError, type JsonRpcErrorEnvelope } from '../../transport/json-rpc-error';
import { RpcError } from '../rpc-error';
import type { ChangeSubscriptions } from './change-subscriptions';
import type { EndReason, ListenSink, ListenStream } from './listen-stream';
import { listenFilter, refusalAnswer } from './listen-request';
import { HonouredFilter, MAX_FILTER_URIS } from './subscription-filter';

/** How long after an interruption a 2025 session's subscriptions are opened again. */
const REOPEN_DELAY_MS = 1000;

/** The session's stdout, as its listeners see it. */
export interface StdioOutlet {
  /** Writes one message; `false` when the client reads slower than messages come. */
  send(message: object): boolean;
  /** Calls `resume` once, when what waited to be written has been. */
  onDrain(resume: () => void): void;
  /** A `notifications/message` at level warning (2025), unless the client asked for less. */
  warn(data: Record<string, unknown>): void;
}

/**
 * The listeners of one stdio session, in both eras. On stdio the session is a connection,
 * so both work on the one stream of messages:
 *
 * * 2026-07-28: `subscriptions/listen`, as on HTTP: acknowledged first, every message
 *   stamped with the request's id; `notifications/cancelled` naming it ends it.
 * * 2025: `resources/subscribe` / `resources/unsubscribe` add and remove URIs of the
 *   session's one listener, whose `notifications/resources/updated` carry no `_meta`. That
 *   era has no way to tell a client its subscriptions were interrupted, so a listener ended
 *   by a lost database connection is opened again, after a second, with the same URIs, and
 *   every document URI among them is reported updated (it may have changed meanwhile).
 *
 * Both are bounded like a listener on HTTP: once stdout holds more than its high-water mark
 * unread, each listener keeps at most `MCP_LISTEN_QUEUE` notifications, and one more drops
 * it. A 2026 listener ends with the error answer saying so. A 2025 session has no request
 * to answer: its subscriptions are all forgotten and a warning `notifications/message`
 * says why (the one message of that revision a server may send unasked); nothing more is
 * reported until the client subscribes again.
 */
export class StdioSubscriptions {
  private readonly listens = new Map<RequestId, ListenStream>();
  private legacyFilter = new HonouredFilter(false);
  private legacy: Promise<ListenStream | JsonRpcErrorEnvelope> | undefined;
  private closed = false;

  constructor(
    private readonly hub: ChangeSubscriptions,
    private readonly principal: Principal,
    private readonly output: StdioOutlet,
  ) {}

  /** A `subscriptions/listen` request: `undefined` once acknowledged, else the refusal. */
  async listen(request: JSONRPCRequest): Promise<JsonRpcErrorEnvelope | undefined> {
    let filter: HonouredFilter;
    try {
      filter = listenFilter(request);
    } catch (error) {
      if (error instanceof RpcError) return jsonRpcError(request.id, error.code, error.detail);
      throw error;
    }
    const opened = await this.hub.open(this.principal, request.id, filter, this.sink(request.id));
    if (!('open' in opened)) return refusalAnswer(request.id, opened).error;
    this.listens.set(request.id, opened);
    return undefined;
  }

  /** Ends the listener opened by request `id`, if any; says whether there was one. */
  cancel(id: RequestId): boolean {
    const stream = this.listens.get(id);
    stream?.end('closed');
    return stream !== undefined;
  }

  /** `resources/subscribe` (2025): `{}`, or -32602 for a URI that names no document or folder. */
  async subscribe(request: JSONRPCRequest): Promise<Result> {
    const { uri } = paramsOf(SubscribeRequestSchema, request);
    if (this.legacyFilter.size >= MAX_FILTER_URIS) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        `Invalid params: this session already follows ${MAX_FILTER_URIS} URIs, the limit; follow a folder with kb://<folder>/ instead`,
      );
    }
    if (!this.legacyFilter.add(uri)) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        'Invalid params: params.uri must be a kb:// URI of a document or a folder (kb://<folder>/)',
      );
    }
    const opened = await (this.legacy ??= this.openLegacy(request.id));
    if (!('open' in opened)) {
      this.legacyFilter.remove(uri);
      this.legacy = undefined;
      throw new RpcError(opened.error.code, opened.error.message, opened.error.data);
    }
    return {};
  }

  /** `resources/unsubscribe` (2025): always `{}`, as the revision has it. */
  unsubscribe(request: JSONRPCRequest): Result {
    this.legacyFilter.remove(paramsOf(UnsubscribeRequestSchema, request).uri);
    return {};
  }

  /** Ends every listener (the session ends). */
  endAll(): void {
    this.closed = true;
    for (const stream of [...this.listens.values()]) stream.end('shutdown');
    void this.legacy?.then((opened) => {
      if ('open' in opened) opened.end('closed');
    });
  }

  private async openLegacy(id: RequestId): Promise<ListenStream | JsonRpcErrorEnvelope> {
    const opened = await this.hub.open(this.principal, undefined, this.legacyFilter, {
      write: (message) => {
        // The 2025 era has no acknowledgement: the answer to resources/subscribe is it.
        if (
          (message as { method?: string }).method === 'notifications/subscriptions/acknowledged'
        ) {
          return true;
        }
        return this.output.send(message);
      },
      onDrain: (resume) => this.output.onDrain(resume),
      end: (_last, reason) => this.legacyEnded(reason),
    });
    return 'open' in opened ? opened : refusalAnswer(id, opened).error;
  }

  private legacyEnded(reason: EndReason): void {
    this.legacy = undefined;
    if (reason === 'overflow') return this.legacyDropped();
    if (reason !== 'interrupted' || this.closed || this.legacyFilter.size === 0) return;
    setTimeout(() => {
      if (this.closed || this.legacy !== undefined) return;
      const reopening = (this.legacy = this.openLegacy(0));
      void reopening.then((opened) => {
        if (!('open' in opened)) {
          if (this.legacy === reopening) this.legacy = undefined;
          return this.legacyEnded('interrupted');
        }
        for (const uri of this.legacyFilter.documentUris()) {
          this.output.send({
            jsonrpc: '2.0',
            method: 'notifications/resources/updated',
            params: { uri },
          });
        }
      });
    }, REOPEN_DELAY_MS).unref();
  }

  /** The 2025 subscriptions fell behind: forgotten, and the client told. */
  private legacyDropped(): void {
    const limit = this.hub.queueLimit;
    const followed = this.legacyFilter.size;
    this.legacyFilter = new HonouredFilter(false);
    this.output.warn({
      code: 'LISTENER_TOO_SLOW',
      limit,
      message: `Subscriptions dropped for falling behind: more than ${limit} notifications waited to be read (MCP_LISTEN_QUEUE); the ${followed} URIs followed are forgotten: subscribe again and re-read what you follow`,
    });
  }

  private sink(id: RequestId): ListenSink {
    return {
      write: (message) => this.output.send(message),
      onDrain: (resume) => this.output.onDrain(resume),
      end: (last) => {
        this.listens.delete(id);
        if (last !== undefined) this.output.send(last);
      },
    };
  }
}

function paramsOf<S extends typeof SubscribeRequestSchema | typeof UnsubscribeRequestSchema>(
  schema: S,
  request: JSONRPCRequest,
): { uri: string } {
  const parsed = schema.safeParse({ method: request.method, params: request.params });
  if (parsed.success) return parsed.data.params;
  throw new RpcError(ErrorCode.InvalidParams, 'Invalid params: params.uri: a string is required');
}
