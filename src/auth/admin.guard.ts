import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ErrorCode } from '../common/domain-error';
import { RETRY_AFTER_SECONDS } from '../common/fault';
import { HttpRefusal } from '../common/http-refusal';
import type { Principal } from './api-key.service';
import { Authenticator } from './authenticator';
import { drawAdminWrite, RateLimits, WRITE_BUDGET_DRAWN_BY_ROUTE } from './rate-limits';

export type AuthenticatedRequest = Request & { principal?: Principal };

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Admin REST routes: with authentication on, an API key or access token granting the
 * `admin` profile is required (401 / 403, 503 when the token cannot be checked now);
 * writes draw on the principal's `RATE_LIMIT_ADMIN_WRITES` budget (429), except a write with
 * an `Idempotency-Key` to a route that draws it itself (WRITE_BUDGET_DRAWN_BY_ROUTE): there a
 * retry answered from the stored answer writes nothing and draws nothing.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(
    private readonly auth: Authenticator,
    private readonly limits: RateLimits,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const admission = await this.auth.admitOnce(request, 'admin', undefined);
    switch (admission.kind) {
      case 'ok':
        break;
      case 'missing':
        throw unauthorized(
          this.auth.resources
            ? 'an API key (X-API-Key) or an access token (Authorization: Bearer) is required'
            : 'an API key is required (X-API-Key or Authorization: Bearer)',
          admission.challenge,
        );
      case 'invalid':
        throw unauthorized(
          admission.reason === undefined
            ? 'the API key is not valid'
            : `the access token is not valid: ${admission.reason}`,
          admission.challenge,
          admission.reason === undefined ? {} : { error_code: 'invalid_token' },
        );
      case 'forbidden':
        throw new HttpRefusal(
          403,
          'FORBIDDEN',
          admission.scope === undefined && admission.challenge === undefined
            ? `key "${admission.principal.name}" does not grant the admin profile`
            : `the access token lacks the scope ${admission.scope ?? 'that grants admin'} (insufficient_scope)`,
          admission.challenge === undefined ? {} : { 'WWW-Authenticate': admission.challenge },
          admission.challenge === undefined
            ? {}
            : { error_code: 'insufficient_scope', scope: admission.scope },
        );
      case 'unavailable':
        throw new HttpRefusal(
          503,
          ErrorCode.UNAVAILABLE,
          `the access token cannot be checked right now: ${admission.reason}; retry in ${RETRY_AFTER_SECONDS} seconds`,
          { 'Retry-After': String(RETRY_AFTER_SECONDS) },
          { retry_after_seconds: RETRY_AFTER_SECONDS },
        );
      default: {
        const unknown: never = admission;
        throw new Error(`unknown admission ${String(unknown)}`);
      }
    }
    request.principal = admission.principal;
    if (WRITES.has(request.method) && !this.routeDrawsBudget(context, request)) {
      await drawAdminWrite(this.limits, admission.principal);
    }
    return true;
  }

  private routeDrawsBudget(context: ExecutionContext, request: Request): boolean {
    return (
      request.headers['idempotency-key'] !== undefined &&
      this.reflector.get<boolean>(WRITE_BUDGET_DRAWN_BY_ROUTE, context.getHandler()) === true
    );
  }
}

function unauthorized(
  message: string,
  challenge: string,
  details: Record<string, unknown> = {},
): HttpRefusal {
  return new HttpRefusal(
    401,
    'UNAUTHENTICATED',
    message,
    { 'WWW-Authenticate': challenge },
    details,
  );
}
