import { randomUUID } from 'node:crypto';
import type { LoggerService } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { isatty } from 'node:tty';
import type { RequestObserver, RoutedRequest } from './http-server';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { PinoPretty, isColorSupported } from 'pino-pretty';
import { AppConfig } from '../config/app-config';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** Probes and scrapes are not worth a log line each. */
const QUIET_PATHS = /^\/(metrics|health\/)/;

/** Hides path secrets (the secret GPT route's token) in anything logged. */
export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(/\/gpt-mcp\/[^/?#]+/, '/gpt-mcp/[redacted]');
}

/**
 * Nest's own start-up chatter (a line per module and per route, some fifty): kept for
 * `LOG_LEVEL=debug`, so that a start at `info` says what matters in a screenful.
 */
const BOOTSTRAP_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/**
 * The process's logger, on stdout (fd 1) unless `fd` says otherwise, written synchronously
 * so that nothing is lost when the process exits. JSON lines, or one readable line per
 * entry when `LOG_FORMAT` asks for it or (`auto`) the log goes to a terminal. Keys, tokens
 * and cookies are redacted wherever they appear.
 */
export function createRootLogger(config: AppConfig, fd: 1 | 2 | number = 1): Logger {
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
  const readable = config.logFormat === 'pretty' || (config.logFormat === 'auto' && isatty(fd));
  if (!readable) return pino(options, pino.destination({ fd, sync: true }));
  return pino(
    options,
    PinoPretty({
      destination: fd,
      sync: true,
      colorize: isatty(fd) && isColorSupported,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,context,req,res,responseTime',
      messageFormat: readableMessage,
    }),
  );
}

/** `Context: message`, and a request as `GET /documents 200 4.2 ms`. */
export function readableMessage(log: Record<string, unknown>, messageKey: string): string {
  const req = log.req as { method?: string; url?: string } | undefined;
  const res = log.res as { statusCode?: number } | undefined;
  if (req !== undefined && res !== undefined) {
    const aborted = log[messageKey] === 'request aborted' ? ', aborted' : '';
    return `${req.method} ${req.url} ${res.statusCode} ${String(log.responseTime)} ms${aborted}`;
  }
  const context = typeof log.context === 'string' ? `${log.context}: ` : '';
  const message = log[messageKey];
  return `${context}${typeof message === 'string' ? message : ''}`;
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
      // A client that leaves before anything of its answer is written is the client's doing: a
      // warning, as a refused request is. An answer cut once begun (the server destroyed it,
      // or the network broke) is an error.
      const cut = !completed && response.headersSent;
      const level = status >= 500 || cut ? 'error' : !completed || status >= 400 ? 'warn' : 'info';
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
            // Every header of every request is a lot to read at info: it is for debugging.
            ...(root.isLevelEnabled('debug') ? { headers: request.headers } : {}),
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
    const context = rest[rest.length - 1];
    const quiet = typeof context === 'string' && BOOTSTRAP_CONTEXTS.has(context);
    this.write(quiet ? 'debug' : 'info', message, rest);
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
