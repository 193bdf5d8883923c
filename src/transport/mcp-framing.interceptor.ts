import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { map, type Observable } from 'rxjs';
import { AppConfig } from '../config/app-config';
import { negotiate, type Negotiated } from './accept-negotiation';
import { frameJson, frameSse, type FramedResponse } from './framing';
import { McpHttpException } from './json-rpc-error';
import type { McpReply } from './mcp-reply';
import { ReplyChannel } from './reply-channel';
import { TransportMetrics } from './transport.metrics';

const channels = new WeakMap<IncomingMessage, ReplyChannel>();

/**
 * The reply channel {@link McpFramingInterceptor} opened for a POST: its negotiated framing
 * (the controller refuses with 406 before running anything whose answer could not be
 * delivered), notifications before the answer, and the client-gone signal.
 */
export function replyChannel(request: IncomingMessage): ReplyChannel | undefined {
  return channels.get(request);
}

export function negotiatedFraming(request: IncomingMessage): Negotiated {
  return channels.get(request)?.framing ?? 'json';
}

export function notAcceptable(): McpHttpException {
  return new McpHttpException(
    406,
    'Not Acceptable: the Accept header must allow application/json or text/event-stream',
  );
}

/**
 * Negotiates the Accept header of a POST before the handler runs (opening its
 * {@link ReplyChannel}), then frames the handler's {@link McpReply}: a JSON body or one SSE
 * event with the anti-buffering headers (SPEC §6), 202 with an empty body for
 * notifications. When the channel already streamed (progress, keep-alive), the answer is
 * the stream's last event. The handler takes `@Res()`, so Nest leaves the writing here.
 */
@Injectable()
export class McpFramingInterceptor implements NestInterceptor {
  constructor(
    private readonly config: AppConfig,
    private readonly metrics: TransportMetrics,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler<McpReply>): Observable<void> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const framing = negotiate(request.headers.accept, { postSse: this.config.mcpPostSse });
    let channel: ReplyChannel | undefined;
    if (request.method === 'POST') {
      channel = new ReplyChannel(response, framing, this.config.mcpSseKeepAliveMs);
      channels.set(request, channel);
    }
    return next.handle().pipe(map((reply) => this.write(response, reply, framing, channel)));
  }

  private write(
    response: Response,
    reply: McpReply,
    framing: Negotiated,
    channel: ReplyChannel | undefined,
  ): void {
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
