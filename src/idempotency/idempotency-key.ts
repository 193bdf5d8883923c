import { hash } from 'node:crypto';
import type { Principal } from '../auth/api-key.service';
import { invalidArgument } from '../common/domain-error';
import { canonicalJson } from '../common/canonical-json';

/** The HTTP header of a retry-safe write, as the IETF draft and Stripe name it. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** The `_meta` field of an MCP `tools/call` carrying the same key (this server's extension). */
export const IDEMPOTENCY_KEY_META = 'io.agentdata/idempotencyKey';

/** The answer header of a request answered from the stored first answer. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

const KEY_MAX_CHARS = 255;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/**
 * The key a client sent, or `undefined` when it sent none. The draft's quoted form
 * (`"8e03…"`, a structured-field string) and the bare one (Stripe's) name the same key.
 * Throws INVALID_ARGUMENT naming the rule for anything else than 1 to 255 printable ASCII
 * characters.
 */
export function parseIdempotencyKey(
  value: unknown,
  field: string = IDEMPOTENCY_KEY_HEADER,
): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw invalidArgument(
      field,
      `must be a string of 1 to ${KEY_MAX_CHARS} printable ASCII characters`,
    );
  }
  const quoted = /^"([^"\\]*)"$/.exec(value);
  const key = quoted ? quoted[1] : value;
  if (key.length === 0 || key.length > KEY_MAX_CHARS || !PRINTABLE_ASCII.test(key)) {
    throw invalidArgument(
      field,
      `must be 1 to ${KEY_MAX_CHARS} printable ASCII characters (space to ~), such as a UUID`,
    );
  }
  return key;
}

/**
 * Who owns a key: two principals may use the same key independently. The kind of admission
 * is part of it, so that an API key and an access token of the same name never share keys.
 */
export function keyOwnerOf(principal: Principal): string {
  return [principal.via, principal.name, principal.subject, principal.clientId]
    .filter((part) => part !== undefined)
    .join(' ');
}

/**
 * SHA-256 (hex) of a request's parts: what a retry must repeat exactly to be answered with
 * the first answer. Objects are taken with their keys sorted, so that a client which
 * serialises the same body in another order is still sending the same request.
 */
export function fingerprintOf(parts: readonly unknown[]): string {
  return hash('sha256', canonicalJson(parts), 'hex');
}
