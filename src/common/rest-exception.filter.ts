import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
  NotFoundException,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { QueryFailedError } from 'typeorm';
import { allowedMethods } from './allowed-methods';
import { DomainError, ErrorCode } from './domain-error';
import { faultOf, logFault, RETRY_AFTER_SECONDS } from './fault';
import { HttpRefusal } from './http-refusal';

/** HTTP status of each domain code on the REST edge. Adding a code without a case fails to compile. */
export function restStatus(code: ErrorCode, request?: Request): number {
  switch (code) {
    case ErrorCode.NOT_FOUND:
      return HttpStatus.NOT_FOUND;
    case ErrorCode.PERMISSION_DENIED:
      return HttpStatus.FORBIDDEN;
    case ErrorCode.ALREADY_EXISTS:
      return HttpStatus.CONFLICT;
    case ErrorCode.REVISION_CONFLICT:
      return request?.headers['if-match'] !== undefined
        ? HttpStatus.PRECONDITION_FAILED
        : HttpStatus.CONFLICT;
    case ErrorCode.PATCH_NO_MATCH:
      return HttpStatus.UNPROCESSABLE_ENTITY;
    case ErrorCode.PATCH_AMBIGUOUS:
      return HttpStatus.CONFLICT;
    case ErrorCode.INVALID_ARGUMENT:
      return HttpStatus.BAD_REQUEST;
    case ErrorCode.TOO_LARGE:
      return HttpStatus.PAYLOAD_TOO_LARGE;
    case ErrorCode.FORBIDDEN_URL:
      return HttpStatus.FORBIDDEN;
    case ErrorCode.UPSTREAM_ERROR:
      return HttpStatus.BAD_GATEWAY;
    case ErrorCode.NOT_IMPLEMENTED:
      return HttpStatus.NOT_IMPLEMENTED;
    case ErrorCode.UNAVAILABLE:
      return HttpStatus.SERVICE_UNAVAILABLE;
    case ErrorCode.IDEMPOTENCY_KEY_REUSED:
      return HttpStatus.UNPROCESSABLE_ENTITY;
    case ErrorCode.IDEMPOTENCY_KEY_IN_USE:
      return HttpStatus.CONFLICT;
    case ErrorCode.NOT_EMPTY:
      return HttpStatus.CONFLICT;
    case ErrorCode.INVALID_BACKUP:
      return HttpStatus.UNPROCESSABLE_ENTITY;
    default: {
      const unmapped: never = code;
      throw new Error(`unmapped error code ${String(unmapped)}`);
    }
  }
}

/** Codes for errors raised by HTTP handling itself rather than by a service. */
const HTTP_CODES: Record<number, string> = {
  400: ErrorCode.INVALID_ARGUMENT,
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: ErrorCode.NOT_FOUND,
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  413: ErrorCode.TOO_LARGE,
  415: 'UNSUPPORTED_MEDIA_TYPE',
  501: ErrorCode.NOT_IMPLEMENTED,
};

/**
 * Every error on the REST edge becomes `{"error": {"code", "message", ...}}` with its
 * status. A database outage is 503 UNAVAILABLE with `Retry-After` (logged once per kind
 * per interval). Unexpected errors are logged and answered with a 500 that reveals nothing.
 */
@Catch()
export class RestExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('RestExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const context = host.switchToHttp();
    const request = context.getRequest<Request>();
    const response = context.getResponse<Response>();
    if (response.headersSent) return;

    let status: number;
    let error: Record<string, unknown>;
    // A path that some route has, asked with another method: 405 with what it allows.
    const allowed = noRouteFor(exception) ? allowedMethods(request) : [];
    const fault = faultOf(exception);
    if (fault !== undefined) {
      if (!(exception instanceof DomainError)) logFault(this.logger, 'REST', exception);
      status = restStatus(fault.code, request);
      error = fault.toJSON();
      response.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    } else if (exception instanceof DomainError) {
      status = restStatus(exception.code, request);
      error = exception.toJSON();
      const retryAfter = exception.details.retry_after_seconds;
      if (typeof retryAfter === 'number') response.setHeader('Retry-After', String(retryAfter));
    } else if (exception instanceof HttpRefusal) {
      status = exception.getStatus();
      error = { code: exception.code, message: exception.message, ...exception.details };
      for (const [name, value] of Object.entries(exception.headers)) {
        response.setHeader(name, value);
      }
    } else if (allowed.length > 0) {
      status = HttpStatus.METHOD_NOT_ALLOWED;
      error = {
        code: HTTP_CODES[status],
        message: `${request.method} is not allowed on ${request.path}; allowed: ${allowed.join(', ')}`,
      };
      response.setHeader('Allow', allowed.join(', '));
    } else if (exception instanceof HttpException) {
      status = exception.getStatus();
      error = {
        code: HTTP_CODES[status] ?? (status >= 500 ? 'INTERNAL' : `HTTP_${status}`),
        message: messageOf(exception),
      };
      if (status === HttpStatus.UNAUTHORIZED) {
        response.setHeader('WWW-Authenticate', 'Bearer realm="agent-data", charset="UTF-8"');
      }
    } else if (isDataException(exception)) {
      // A value PostgreSQL refuses (SQLSTATE class 22, or too deeply nested) is the caller's
      // to fix; validation should have caught it, so it is logged, but it is not a 500.
      status = HttpStatus.BAD_REQUEST;
      error = {
        code: ErrorCode.INVALID_ARGUMENT,
        message: `a value was refused by the database: ${exception.message}`,
      };
      this.logger.warn(`database refused a value: ${exception.message}`);
    } else {
      status = HttpStatus.INTERNAL_SERVER_ERROR;
      error = { code: 'INTERNAL', message: 'internal error; the server log has the details' };
      this.logger.error(
        exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
      );
    }
    response.status(status).json({ error });
  }
}

/** Nest's answer when no route has the request's method and path. */
function noRouteFor(exception: unknown): boolean {
  return exception instanceof NotFoundException && /^Cannot [A-Z]+ /.test(exception.message);
}

function isDataException(exception: unknown): exception is QueryFailedError {
  if (!(exception instanceof QueryFailedError)) return false;
  const sqlState = (exception.driverError as { code?: unknown } | undefined)?.code;
  return typeof sqlState === 'string' && (sqlState.startsWith('22') || sqlState === '54001');
}

function messageOf(exception: HttpException): string {
  const body = exception.getResponse();
  if (typeof body === 'string') return body;
  const message = (body as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : exception.message;
}
