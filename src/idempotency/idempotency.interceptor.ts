import {
  applyDecorators,
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import type { Response } from 'express';
import { defer, lastValueFrom, type Observable } from 'rxjs';
import type { AuthenticatedRequest } from '../auth/admin.guard';
import { LOCAL_PRINCIPAL } from '../auth/api-key.service';
import { drawAdminWrite, RateLimits, WRITE_BUDGET_DRAWN_BY_ROUTE } from '../auth/rate-limits';
import { restStatus } from '../common/rest-exception.filter';
import { fingerprintOf, keyOwnerOf, parseIdempotencyKey, REPLAYED_HEADER } from './idempotency-key';
import type { StoredAnswer } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';

/** Answer headers a replay repeats: the ones a write's caller acts on. */
const KEPT_HEADERS = ['etag', 'location', 'preference-applied'] as const;

/**
 * Request headers that change what a write does or answers: a retry must repeat them to be
 * the same request (a conditional write is another write without its If-Match).
 */
const FINGERPRINT_HEADERS = ['if-match', 'if-none-match', 'prefer'] as const;

/**
 * The REST edge of retry-safe writes: a write route sent with `Idempotency-Key` runs once
 * per caller and key, in one transaction with its stored answer (IdempotencyService); a
 * retry gets that answer, its status and kept headers, with `Idempotent-Replayed: true`.
 * Without the header the route runs as it always does.
 *
 * A keyed request draws on the admin write budget here, only when it is to write: a retry
 * answered from the stored answer writes nothing and draws nothing (the admin guard leaves
 * keyed requests of these routes to it, and draws on the budget for the others).
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly keys: IdempotencyService,
    private readonly limits: RateLimits,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest>();
    const response = http.getResponse<Response>();
    return defer(async () => {
      const key = parseIdempotencyKey(request.headers['idempotency-key']);
      if (key === undefined) return lastValueFrom(next.handle(), { defaultValue: undefined });
      const principal = request.principal ?? LOCAL_PRINCIPAL;
      const { answer, replayed } = await this.keys.once(
        {
          owner: keyOwnerOf(principal),
          key,
          fingerprint: fingerprintOf([
            request.method,
            request.originalUrl,
            request.body,
            ...FINGERPRINT_HEADERS.map((name) => request.headers[name] ?? null),
          ]),
        },
        async () => {
          const body: unknown = await lastValueFrom(next.handle(), { defaultValue: undefined });
          return { status: response.statusCode, headers: keptHeaders(response), body };
        },
        (error) => ({ status: restStatus(error.code, request), body: { error: error.toJSON() } }),
        () => drawAdminWrite(this.limits, principal),
      );
      if (replayed) replay(response, answer);
      return answer.body;
    });
  }
}

/**
 * A write route that takes an `Idempotency-Key`: the interceptor above, and the admin write
 * budget drawn by it rather than by the guard (a replay draws nothing).
 */
export function Idempotent(): MethodDecorator {
  return applyDecorators(
    SetMetadata(WRITE_BUDGET_DRAWN_BY_ROUTE, true),
    UseInterceptors(IdempotencyInterceptor),
  );
}

function keptHeaders(response: Response): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = response.getHeader(name);
    if (value !== undefined) kept[name] = String(value);
  }
  return kept;
}

function replay(response: Response, answer: StoredAnswer): void {
  response.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers ?? {})) response.setHeader(name, value);
  response.setHeader(REPLAYED_HEADER, 'true');
}
