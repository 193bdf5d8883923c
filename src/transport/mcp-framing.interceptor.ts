import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { map, type Observable } from 'rxjs';
import { AppConfig } from '../config/app-config';
import { negotiate, type Negotiated } from './accept-negotiation';
import { frameJson, frameSse, type FramedResponse } from './framing';
import { McpHttpException } from './json-rpc-error';
import type { McpReply } from './mcp-reply';
import { TransportMetrics } from './transport.metrics';

const negotiated = new WeakMap<IncomingMessage, Negotiated>();

/**
 * The framing negotiated for `request` by {@link McpFramingInterceptor}. The controller
 * reads it to refuse (406) before running anything whose answer could not be delivered.
 */
export function negotiatedFraming(request: IncomingMessage): Negotiated {
  return negotiated.get(request) ?? 'json';
}

export function notAcceptable(): McpHttpException {
  return new McpHttpException(
    406,
    'Not Acceptable: the Accept header must allow application/json or text/event-stream',
  );
}

/**
 * Negotiates the Accept header before the handler runs, then frames the handler's
 * {@link McpReply}: a JSON body or exactly one SSE event with the anti-buffering headers
 * (SPEC §6), 202 with an empty body for notifications. The handler takes `@Res()`, so
 * Nest leaves the writing to this interceptor.
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
    negotiated.set(request, framing);
    return next.handle().pipe(map((reply) => this.write(response, reply, framing)));
  }

  private write(response: Response, reply: McpReply, framing: Negotiated): void {
    switch (reply.kind) {
      case 'rpc': {
        if (framing === 'not-acceptable') throw notAcceptable();
        const framed =
          framing === 'sse'
            ? frameSse(reply.status, reply.payload)
            : frameJson(reply.status, reply.payload);
        this.send(response, framed);
        this.metrics.answered(framing);
        return;
      }
      case 'json':
        this.send(response, frameJson(reply.status, reply.payload));
        this.metrics.answered('json');
        return;
      case 'accepted':
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

  private send(response: Response, framed: FramedResponse): void {
    response.writeHead(framed.status, framed.headers).end(framed.body);
  }
}
