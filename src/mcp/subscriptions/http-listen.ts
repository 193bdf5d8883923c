import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ServerResponse } from 'node:http';
import type { Principal } from '../../auth/api-key.service';
import { parseAccept } from '../../transport/accept-negotiation';
import { serialize, SSE_HEADERS } from '../../transport/framing';
import { HTTP_REFUSAL, jsonRpcError } from '../../transport/json-rpc-error';
import type { McpReply } from '../../transport/mcp-reply';
import type { McpRequest } from '../mcp-request';
import { RpcError } from '../rpc-error';
import type { ChangeSubscriptions } from './change-subscriptions';
import type { ListenSink } from './listen-stream';
import { listenFilter, refusalAnswer } from './listen-request';
import { HonouredFilter } from './subscription-filter';

/**
 * A `subscriptions/listen` POST (2026-07-28): its answer is an SSE stream whatever the
 * Accept's preference, as long as the Accept allows one (406 otherwise), opening with the
 * acknowledgement and kept alive by `: keepalive` comments. Returns `streamed` once the
 * stream is open (it then lives on its own until the client closes it, the server ends it,
 * or it falls behind), or the refusal to frame.
 */
export async function listenOverHttp(
  subscriptions: ChangeSubscriptions,
  request: McpRequest,
  response: ServerResponse,
  listen: JSONRPCRequest,
  principal: Principal,
  keepAliveMs: number,
): Promise<McpReply> {
  if (!parseAccept(request.headers.accept).wantsSse) {
    return {
      kind: 'json',
      status: 406,
      payload: jsonRpcError(
        listen.id,
        HTTP_REFUSAL,
        'Not Acceptable: subscriptions/listen answers with an SSE stream; the Accept header must allow text/event-stream',
      ),
    };
  }
  let filter: HonouredFilter;
  try {
    filter = listenFilter(listen);
  } catch (error) {
    if (!(error instanceof RpcError)) throw error;
    return {
      kind: 'json',
      status: 200,
      payload: jsonRpcError(listen.id, error.code, error.detail),
    };
  }
  const sink = new SseSink(response, keepAliveMs);
  const opened = await subscriptions.open(principal, listen.id, filter, sink);
  if (!('open' in opened)) {
    const { status, error } = refusalAnswer(listen.id, opened);
    return { kind: 'json', status, payload: error };
  }
  if (response.destroyed) opened.end('closed');
  else response.once('close', () => opened.end('closed'));
  return { kind: 'streamed' };
}

/** A listener's messages as SSE events on an HTTP response, with keep-alive comments. */
class SseSink implements ListenSink {
  private keepAlive: NodeJS.Timeout | undefined;

  constructor(
    private readonly response: ServerResponse,
    private readonly keepAliveMs: number,
  ) {}

  write(message: object): boolean {
    if (!this.response.headersSent) {
      this.response.writeHead(200, SSE_HEADERS);
      this.scheduleKeepAlive();
    }
    if (this.response.destroyed || this.response.writableEnded) return true;
    return this.response.write(event(message));
  }

  onDrain(resume: () => void): void {
    this.response.once('drain', resume);
  }

  end(last?: object): void {
    clearTimeout(this.keepAlive);
    if (this.response.destroyed || this.response.writableEnded) return;
    if (!this.response.headersSent) this.response.writeHead(200, SSE_HEADERS);
    this.response.end(last === undefined ? undefined : event(last));
  }

  private scheduleKeepAlive(): void {
    this.keepAlive = setTimeout(() => {
      if (this.response.destroyed || this.response.writableEnded) return;
      this.response.write(': keepalive\n\n');
      this.scheduleKeepAlive();
    }, this.keepAliveMs);
    this.keepAlive.unref();
  }
}

function event(message: object): string {
  return `event: message\ndata: ${serialize(message)}\n\n`;
}
