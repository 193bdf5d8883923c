import { SERVER_INFO_META_KEY } from '@modelcontextprotocol/core/internal';
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import { PreSerialized } from '../transport/framing';
import { SERVER_INFO } from './server-info';

/** The caching hints of a 2026 result (the revision's `CacheableResult`). */
export interface CacheHints {
  /** How long the result may be considered fresh, in milliseconds. */
  readonly ttlMs: number;
  readonly cacheScope: 'public' | 'private';
}

/**
 * Lists that change only with a new release of the server, and are the same for everyone
 * who may call the endpoint: fresh for five minutes, shareable.
 */
const STATIC: CacheHints = { ttlMs: 300_000, cacheScope: 'public' };

/**
 * Documents change at any moment (agents write while others read) and are behind the
 * endpoint's authentication: always stale, never shared across callers.
 */
const LIVE: CacheHints = { ttlMs: 0, cacheScope: 'private' };

/** The caching hints of each 2026 method whose result the revision makes cacheable. */
export const MODERN_RESULT_HINTS: Readonly<Record<string, CacheHints>> = {
  'server/discover': STATIC,
  'tools/list': STATIC,
  'prompts/list': STATIC,
  'resources/templates/list': STATIC,
  'resources/list': LIVE,
  'resources/read': LIVE,
};

const META = { [SERVER_INFO_META_KEY]: SERVER_INFO };
const META_JSON = JSON.stringify(META);

/**
 * A result as the 2026-07-28 revision shapes it: `resultType: "complete"`, the server's
 * identity in `_meta`, and `hints` when the method is cacheable. A pre-serialised result is
 * spliced rather than parsed (results never carry a top-level `_meta` of their own).
 */
export function decorate(
  result: Result | PreSerialized,
  hints: CacheHints | undefined,
): Result | PreSerialized {
  if (!(result instanceof PreSerialized)) {
    return {
      resultType: 'complete',
      ...result,
      ...hints,
      _meta: { ...result._meta, ...META },
    };
  }
  const inner = result.json.slice(1, -1);
  const tail =
    hints === undefined ? '' : `,"ttlMs":${hints.ttlMs},"cacheScope":"${hints.cacheScope}"`;
  return new PreSerialized(
    `{"resultType":"complete"${inner === '' ? '' : `,${inner}`}${tail},"_meta":${META_JSON}}`,
  );
}
