import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import { AppConfig } from '../config/app-config';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Hides path secrets (the secret GPT route's token) in anything logged. */
export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(/\/gpt-mcp\/[^/?#]+/, '/gpt-mcp/[redacted]');
}

/**
 * Structured JSON logs with a request id per request (taken from `X-Request-Id` when it is
 * sane, else generated, and echoed back). Keys, tokens and cookies are never written.
 */
export function loggerParams(config: AppConfig): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      genReqId: (request: IncomingMessage, response: ServerResponse) => {
        const given = request.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        response.setHeader('X-Request-Id', id);
        return id;
      },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          'req.headers.cookie',
          'res.headers["set-cookie"]',
        ],
        censor: '[redacted]',
      },
      serializers: {
        req: (request: {
          id: unknown;
          method: string;
          url: string;
          headers: Record<string, unknown>;
        }) => ({
          id: request.id,
          method: request.method,
          url: redactUrl(request.url),
          headers: request.headers,
        }),
      },
      customLogLevel: (_request, response, error) =>
        error || response.statusCode >= 500
          ? 'error'
          : response.statusCode >= 400
            ? 'warn'
            : 'info',
      autoLogging: { ignore: (request) => /^\/(metrics|health\/)/.test(request.url ?? '') },
      quietReqLogger: true,
    },
  };
}
