import { Injectable } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppConfig } from '../config/app-config';
import { negotiate, type Negotiated } from './accept-negotiation';
import { JSON_HEADERS, serializeBytes, SSE_HEADERS, sseEventBytes } from './framing';
import { McpHttpException } from './json-rpc-error';
import type { McpReply } from './mcp-reply';
import { ReplyChannel } from './reply-channel';
import { TransportMetrics } from './transport.metrics';

export function notAcceptable(): McpHttpException {
  return new McpHttpException(
    406,
    'Not Acceptable: the Accept header must allow application/json or text/event-stream',
  );
}

/** What {@link McpFraming.open} negotiated for one request. */
export interface OpenedReply {
  readonly framing: Negotiated;
  readonly channel: ReplyChannel | undefined;
}

/**
 * Negotiates the Accept header of a request before the controller works on it (opening a
 * POST's {@link ReplyChannel}), then frames the controller's {@link McpReply}: a JSON body
 * or one SSE event with the anti-buffering headers (docs/mcp.md), 202 with an empty body for
 * notifications. When the channel already streamed (progress, keep-alive), the answer is
 * the stream's last event. Called by the controller itself, not as an interceptor: Nest's
 * interceptor runner costs an `AsyncResource` and an observable per request.
 */
@Injectable()
export class McpFraming {
  constructor(
    private readonly config: AppConfig,
    private readonly metrics: TransportMetrics,
  ) {}

  open(request: IncomingMessage, response: ServerResponse): OpenedReply {
    const framing = negotiate(request.headers.accept, { postSse: this.config.mcpPostSse });
    if (request.method !== 'POST') return { framing, channel: undefined };
    const channel = new ReplyChannel(response, framing, this.config.mcpSseKeepAliveMs);
    return { framing, channel };
  }

  /** Writes `reply` as {@link open} negotiated; throws 406 for an answer that cannot be framed. */
  write(response: ServerResponse, reply: McpReply, { framing, channel }: OpenedReply): void {
    switch (reply.kind) {
      case 'rpc': {
        if (framing === 'not-acceptable') throw notAcceptable();
        if (framing === 'sse') {
          const event = sseEventBytes(reply.payload);
          if (channel?.finish(event) !== true) {
            send(response, reply.status, SSE_HEADERS, event, reply.headers);
          }
        } else {
          // A JSON answer never opens the stream: finish only ends the channel.
          channel?.finish();
          send(response, reply.status, JSON_HEADERS, serializeBytes(reply.payload), reply.headers);
        }
        this.metrics.answered(framing);
        return;
      }
      case 'json':
        // Refusals come before any work starts; should a stream be open all the same, the
        // answer still reaches the client, as its last event.
        if (channel?.finish(sseEventBytes(reply.payload)) === true) {
          this.metrics.answered('sse');
          return;
        }
        send(response, reply.status, JSON_HEADERS, serializeBytes(reply.payload), reply.headers);
        this.metrics.answered('json');
        return;
      case 'accepted':
        if (channel?.finish() === true) return;
        response.writeHead(202).end();
        this.metrics.answered('empty');
        return;
      case 'empty':
        response.writeHead(reply.status, reply.headers).end();
        this.metrics.answered('empty');
        return;
      case 'streamed':
        channel?.finish();
        this.metrics.answered('sse');
        return;
      default: {
        const unknown: never = reply;
        throw new Error(`unknown reply ${JSON.stringify(unknown)}`);
      }
    }
  }
}

/**
 * Writes a whole answer: its status, `headers` after `extra`, its length and its bytes,
 * in one write (a body of known length, not chunked).
 */
export function send(
  response: ServerResponse,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: Buffer,
  extra?: Readonly<Record<string, string>>,
): void {
  response
    .writeHead(status, { ...extra, ...headers, 'Content-Length': String(body.length) })
    .end(body);
}
