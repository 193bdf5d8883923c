import { z } from 'zod';

/**
 * The answers of `/health/*`, described once: the readiness checks are typed from them and
 * the OpenAPI document publishes them.
 */

export const liveSchema = z.object({ status: z.literal('ok') });
export type Live = z.output<typeof liveSchema>;

/**
 * One readiness check's answer. `ok: false` makes /health/ready answer 503 when the check
 * is `required`; `detail` says what was seen (never an internal address or path: the
 * endpoint needs no key).
 */
export const checkResultSchema = z.object({
  ok: z.boolean(),
  required: z.boolean(),
  detail: z.unknown().optional(),
});
export type CheckResult = z.output<typeof checkResultSchema>;

export const readySchema = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.record(z.string(), checkResultSchema),
});
export type Ready = z.output<typeof readySchema>;
