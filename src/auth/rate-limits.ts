import { Injectable, Logger } from '@nestjs/common';
import { Counter } from 'prom-client';
import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { type Profile } from '../config/config-values';
import { type RateLimit } from '../config/auth-config';
import { HttpRefusal } from '../common/http-refusal';
import { MetricsService } from '../metrics/metrics.service';
import type { Principal } from './api-key.service';

/** What is limited: MCP `tools/call` messages, or writes through the admin REST API. */
export type LimitedAction = 'tool_call' | 'admin_write';

export type RateDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number; readonly limit: RateLimit };

/** The table of the budgets (migration 1763800060000): one row per principal and action. */
const TABLE = 'kb_rate_limits';

/**
 * Per-principal budgets (docs/oauth.md), kept in PostgreSQL by `rate-limiter-flexible` so every
 * replica draws on the same one. A principal that used up its budget is refused from
 * memory until the window ends, without asking the database again. Should the database
 * not answer, each process falls back to a budget of its own (the insurance limiter)
 * rather than refusing or waving everything through.
 */
@Injectable()
export class RateLimits {
  private readonly logger = new Logger('RateLimits');
  private readonly budgets: Partial<
    Record<LimitedAction, { limiter: RateLimiterAbstract; limit: RateLimit }>
  > = {};
  private readonly refused: Counter<'profile'>;

  constructor(config: AppConfig, dataSource: DataSource, metrics: MetricsService) {
    this.refused = new Counter({
      name: 'mcp_rate_limited_total',
      help: 'Requests refused with 429 by the per-principal rate limits, by profile (admin: REST writes)',
      labelNames: ['profile'] as const,
      registers: [metrics.registry],
    });
    const wanted: Record<LimitedAction, RateLimit | undefined> = {
      tool_call: config.rateLimitToolCalls,
      admin_write: config.rateLimitAdminWrites,
    };
    for (const action of Object.keys(wanted) as LimitedAction[]) {
      const limit = wanted[action];
      if (limit === undefined) continue;
      const options = { keyPrefix: action, points: limit.points, duration: limit.windowSeconds };
      const limiter = new RateLimiterPostgres({
        ...options,
        storeClient: (dataSource.driver as unknown as { master: unknown }).master,
        storeType: 'pool',
        tableName: TABLE,
        tableCreated: true,
        inMemoryBlockOnConsumed: limit.points,
        inMemoryBlockDuration: limit.windowSeconds,
        insuranceLimiter: new RateLimiterMemory(options),
      });
      this.budgets[action] = { limiter, limit };
    }
  }

  enabled(action: LimitedAction): boolean {
    return this.budgets[action] !== undefined;
  }

  /** Takes `points` from the principal's budget for `action`; refused ones are counted under `profile`. */
  async consume(
    action: LimitedAction,
    principal: Principal,
    profile: Profile,
    points = 1,
  ): Promise<RateDecision> {
    const budget = this.budgets[action];
    if (budget === undefined || points <= 0) return { allowed: true };
    const { limiter, limit } = budget;
    try {
      await limiter.consume(principal.name.slice(0, 200), points);
      return { allowed: true };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) {
        // Both the store and the insurance failed: let the request through rather than fail it.
        this.logger.warn(`rate limit not checked: ${String(rejection)}`);
        return { allowed: true };
      }
      this.refused.inc({ profile });
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)),
        limit,
      };
    }
  }
}

/**
 * Route metadata: this write route draws on the admin write budget itself once it knows the
 * request will write (the idempotency keys' interceptor, after looking the key up), so that a
 * retry answered from a stored answer, which writes nothing, costs nothing. The admin guard
 * leaves such a request's budget alone when it carries an `Idempotency-Key`.
 */
export const WRITE_BUDGET_DRAWN_BY_ROUTE = 'agent-data:write-budget-drawn-by-route';

/**
 * Takes one admin write from `principal`'s budget, or throws the 429 RATE_LIMITED refusal
 * (with Retry-After) that names the limit.
 */
export async function drawAdminWrite(limits: RateLimits, principal: Principal): Promise<void> {
  const decision = await limits.consume('admin_write', principal, 'admin');
  if (decision.allowed) return;
  throw new HttpRefusal(
    429,
    'RATE_LIMITED',
    `too many writes by ${principal.name}: the limit is ${describeLimit(decision.limit, 'writes')}; retry in ${decision.retryAfterSeconds} s`,
    { 'Retry-After': String(decision.retryAfterSeconds) },
    { retry_after_seconds: decision.retryAfterSeconds },
  );
}

/** "120 tool calls per 60 s": a limit as a refusal message names it. */
export function describeLimit(limit: RateLimit, what: string): string {
  return `${limit.points} ${what} per ${limit.windowSeconds} s`;
}
