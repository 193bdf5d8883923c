import { hash, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiKeyEntry, AppConfig } from '../config/app-config';
import { Profile } from '../config/config-values';

/**
 * Who made a request: a key's name, `oauth:<subject>` for an access token, or `local` when
 * authentication is off (loopback only).
 */
export interface Principal {
  readonly name: string;
  /**
   * How it was admitted: an API key (`name` is the key's), an access token, the secret GPT
   * route, or nobody (authentication off: `local`). An access policy names principals by it.
   */
  readonly via: 'key' | 'token' | 'route' | 'local';
  /** Profiles granted; `null` means every profile (authentication off). */
  readonly profiles: ReadonlySet<Profile> | null;
  /** An access token's `sub` (or its client's id when it has none). */
  readonly subject?: string;
  /** An access token's client (`client_id`, `azp`, `cid` or `appid`). */
  readonly clientId?: string;
  /** An access token's scopes. */
  readonly scopes?: readonly string[];
  /** An access token's groups (`OAUTH_GROUPS_CLAIM`). */
  readonly groups?: readonly string[];
}

/** The audit actor of a principal: its name, and an access token's client. */
export function actorOf(principal: Principal): string {
  return principal.clientId === undefined
    ? principal.name
    : `${principal.name} (client ${principal.clientId})`;
}

export const LOCAL_PRINCIPAL: Principal = { name: 'local', via: 'local', profiles: null };

export type Authentication =
  { outcome: 'ok'; principal: Principal } | { outcome: 'missing' } | { outcome: 'invalid' };

/**
 * Checks API keys (docs/mcp.md). A key is compared as a SHA-256 digest with every configured
 * key in constant time. A key found valid is remembered by its value (one entry per
 * configured key at most), so its later requests skip the digest; a key not found is never
 * remembered, and always costs the full comparison.
 */
@Injectable()
export class ApiKeyService {
  private readonly entries: ReadonlyArray<{ entry: ApiKeyEntry; digest: Buffer }>;
  private readonly verified = new Map<string, Principal>();

  constructor(private readonly config: AppConfig) {
    this.entries = config.apiKeys.map((entry) => ({ entry, digest: digest(entry.key) }));
  }

  get enabled(): boolean {
    return this.config.authEnabled;
  }

  authenticate(headers: IncomingHttpHeaders): Authentication {
    if (!this.enabled) return { outcome: 'ok', principal: LOCAL_PRINCIPAL };
    const key = presentedKey(headers);
    if (key === undefined) return { outcome: 'missing' };
    const known = this.verified.get(key);
    if (known !== undefined) return { outcome: 'ok', principal: known };
    const presented = digest(key);
    let match: ApiKeyEntry | undefined;
    // Look at every entry, so the time taken says nothing about which one matched.
    for (const { entry, digest: known } of this.entries) {
      if (timingSafeEqual(presented, known) && match === undefined) match = entry;
    }
    if (match === undefined) return { outcome: 'invalid' };
    const principal: Principal = { name: match.name, via: 'key', profiles: match.profiles };
    this.verified.set(key, principal);
    return { outcome: 'ok', principal };
  }

  static allows(principal: Principal, profile: Profile): boolean {
    return principal.profiles === null || principal.profiles.has(profile);
  }
}

/** The key from `X-API-Key`, else from `Authorization: Bearer <key>`. */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  return presentedCredential(headers)?.value;
}

/** The credential of a request and where it came from: only a Bearer value may be an access token. */
export function presentedCredential(
  headers: IncomingHttpHeaders,
): { value: string; bearer: boolean } | undefined {
  const header = headers['x-api-key'];
  const fromHeader = Array.isArray(header) ? header[0] : header;
  if (fromHeader && fromHeader.trim() !== '') return { value: fromHeader.trim(), bearer: false };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return match ? { value: match[1], bearer: true } : undefined;
}

/** SHA-256 in one call (no Hash object per request), for comparing secrets in constant time. */
export function digest(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}
