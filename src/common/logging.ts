import { randomUUID } from 'node:crypto';
import type { LoggerService } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { RequestObserver, RoutedRequest } from './http-server';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { AppConfig } from '../config/app-config';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** Probes and scrapes are not worth a log line each. */
const QUIET_PATHS = /^\/(metrics|health\/)/;

/** Hides path secrets (the secret GPT route's token) in anything logged. */
export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(/\/gpt-mcp\/[^/?#]+/, '/gpt-mcp/[redacted]');
}

/**
 * The process's JSON logger, on stdout unless `destination` says otherwise. Keys, tokens and
 * cookies are redacted wherever they appear.
 */
export function createRootLogger(config: AppConfig, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level: config.logLevel,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
      ],
      censor: '[redacted]',
    },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/**
 * A request id per request (the caller's `X-Request-Id` when it is sane, else a UUID,
 * echoed back) and one access log line when the answer is complete. Costs nothing beyond
 * the id when the line's level is off: no per-request child logger, no async context.
 */
export function requestLogging(root: Logger): RequestObserver {
  return (request: RoutedRequest, response: ServerResponse): void => {
    const given = request.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    request.id = id;
    response.setHeader('X-Request-Id', id);
    const started = performance.now();
    // 'close' follows 'finish' on a complete answer and comes alone on an aborted one.
    response.once('close', () => {
      const status = response.statusCode;
      const completed = response.writableFinished;
      const level = !completed || status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      if (
        !root.isLevelEnabled(level) ||
        (completed && status < 400 && QUIET_PATHS.test(request.url))
      )
        return;
      root[level](
        {
          req: {
            id,
            method: request.method,
            url: redactUrl(request.originalUrl),
            headers: request.headers,
          },
          res: { statusCode: status },
          responseTime: Math.round((performance.now() - started) * 100) / 100,
        },
        completed ? 'request completed' : 'request aborted',
      );
    });
  };
}

/**
 * Nest's logger interface on top of pino: `context` becomes a field, objects are merged.
 * `leftToCaller` names the errors Nest's ExceptionHandler is not to log: Nest logs what stops
 * its start, stack and all, before NestFactory rejects with it, and a refusal the process
 * states in one line itself (a setting, a model not installed) needs no second telling.
 */
export class PinoNestLogger implements LoggerService {
  constructor(
    private readonly root: Logger,
    private readonly leftToCaller: (error: unknown) => boolean = () => false,
  ) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    if (rest[rest.length - 1] === 'ExceptionHandler' && this.leftToCaller(message)) return;
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: pino.Level, message: unknown, rest: unknown[]): void {
    if (!this.root.isLevelEnabled(level)) return;
    // Nest passes the context name last; an error's stack, when given, comes before it.
    const context =
      typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const stack = rest.length > 1 && typeof rest[0] === 'string' ? rest[0] : undefined;
    if (message instanceof Error) {
      this.root[level]({ context, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.root[level]({ context, ...(message as Record<string, unknown>) });
    } else {
      this.root[level]({ context, ...(stack ? { stack } : {}) }, String(message));
    }
  }
}
