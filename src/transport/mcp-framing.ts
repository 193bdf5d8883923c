import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { AppConfig } from '../config/app-config';
import { negotiate, type Negotiated } from './accept-negotiation';
import { frameJson, frameSse, type FramedResponse } from './framing';
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
 * or one SSE event with the anti-buffering headers (SPEC §6), 202 with an empty body for
 * notifications. When the channel already streamed (progress, keep-alive), the answer is
 * the stream's last event. Called by the controller itself, not as an interceptor: Nest's
 * interceptor runner costs an `AsyncResource` and an observable per request (issue 12).
 */
@Injectable()
export class McpFraming {
  constructor(
    private readonly config: AppConfig,
    private readonly metrics: TransportMetrics,
  ) {}

  open(request: IncomingMessage, response: Response): OpenedReply {
    const framing = negotiate(request.headers.accept, { postSse: this.config.mcpPostSse });
    if (request.method !== 'POST') return { framing, channel: undefined };
    const channel = new ReplyChannel(response, framing, this.config.mcpSseKeepAliveMs);
    return { framing, channel };
  }

  /** Writes `reply` as {@link open} negotiated; throws 406 for an answer that cannot be framed. */
  write(response: Response, reply: McpReply, { framing, channel }: OpenedReply): void {
    switch (reply.kind) {
      case 'rpc': {
        if (framing === 'not-acceptable') throw notAcceptable();
        const framed =
          framing === 'sse'
            ? frameSse(reply.status, reply.payload)
            : frameJson(reply.status, reply.payload);
        if (channel?.finish(framed.body) !== true) this.send(response, framed);
        this.metrics.answered(framing);
        return;
      }
      case 'json':
        // Refusals come before any work starts; should a stream be open all the same, the
        // answer still reaches the client, as its last event.
        if (channel?.finish(frameSse(reply.status, reply.payload).body) === true) {
          this.metrics.answered('sse');
          return;
        }
        this.send(response, frameJson(reply.status, reply.payload), reply.headers);
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
      default: {
        const unknown: never = reply;
        throw new Error(`unknown reply ${JSON.stringify(unknown)}`);
      }
    }
  }

  private send(
    response: Response,
    framed: FramedResponse,
    extra?: Readonly<Record<string, string>>,
  ): void {
    const headers = extra === undefined ? framed.headers : { ...extra, ...framed.headers };
    response.writeHead(framed.status, headers).end(framed.body);
  }
}
