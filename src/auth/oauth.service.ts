import { createHash } from 'node:crypto';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { AppConfig } from '../config/app-config';
import { type OAuthSettings } from '../config/auth-config';
import { type Profile } from '../config/config-values';
import type { Principal } from './api-key.service';
import { describe, discover, type IssuerMetadata } from './issuer-metadata';

/** What became of a bearer token that is not an API key. */
export type TokenCheck =
  | { readonly outcome: 'ok'; readonly principal: Principal }
  /** Not acceptable: the reason is safe to show (it never quotes the token). */
  | { readonly outcome: 'invalid'; readonly reason: string }
  /** The issuer could not be asked (metadata, keys, introspection): try again later. */
  | { readonly outcome: 'unavailable'; readonly reason: string };

/** Longest token looked at; a header over 16 KiB is refused before this anyway. */
const MAX_TOKEN_CHARS = 8192;
/** After a failed discovery, callers get `unavailable` at once for this long, then it is tried again. */
const DISCOVERY_RETRY_MS = 5000;
const JWKS_COOLDOWN_MS = 30_000;
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** Introspection answers kept (by token digest), and for how long at most. */
const INTROSPECTION_CACHE_ENTRIES = 10_000;
const INTROSPECTION_CACHE_MS = 5 * 60_000;
const INTROSPECTION_NEGATIVE_CACHE_MS = 10_000;
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt', 'jwt']);
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * OAuth 2.1 access tokens (docs/oauth.md), as a resource server: JWTs verified against the
 * issuer's JWKS (signature, `iss`, `aud` = this resource, `exp`/`nbf` with a small skew,
 * `typ` where present), opaque tokens by introspection (RFC 7662) when configured. Scopes
 * map to profiles. Tokens are never forwarded (except to the introspection endpoint, which
 * is what it is for), logged, or kept: caches are keyed by their SHA-256.
 */
@Injectable()
export class OAuthService implements OnApplicationBootstrap {
  private readonly logger = new Logger('OAuth');
  private readonly settings: OAuthSettings | undefined;
  private discovery: { metadata: Promise<IssuerMetadata>; failedAt?: number } | undefined;
  private keys: JWTVerifyGetKey | undefined;
  private readonly introspected = new Map<
    string,
    { answer: Record<string, unknown>; until: number }
  >();

  constructor(config: AppConfig) {
    this.settings = config.oauth;
  }

  /** Discovery starts at boot, so the first request does not wait for it; a failure is only logged. */
  onApplicationBootstrap(): void {
    if (!this.settings) return;
    this.metadata().then(
      () => this.logger.log(`authorization server ${this.settings!.issuer} discovered`),
      (error: unknown) =>
        this.logger.warn(
          `authorization server metadata unavailable for now (${describe(error)}); tokens get 503 until it answers`,
        ),
    );
  }

  /** Checks a bearer token for a use whose accepted `aud` values are `audiences`; never throws. */
  async verify(token: string, audiences: readonly string[]): Promise<TokenCheck> {
    const settings = this.settings;
    if (!settings) return { outcome: 'invalid', reason: 'OAuth is not configured' };
    if (token.length > MAX_TOKEN_CHARS) {
      return {
        outcome: 'invalid',
        reason: `the token is longer than ${MAX_TOKEN_CHARS} characters`,
      };
    }
    let metadata: IssuerMetadata;
    try {
      metadata = await this.metadata();
    } catch {
      return {
        outcome: 'unavailable',
        reason: "the authorization server's metadata could not be read",
      };
    }
    if (JWT_SHAPE.test(token) && metadata.jwksUri !== undefined) {
      return this.verifyJwt(token, settings, metadata.jwksUri, audiences);
    }
    if (settings.introspection) return this.introspect(token, settings, metadata, audiences);
    return { outcome: 'invalid', reason: 'the token is not a JWT and is not an API key' };
  }

  /** Profiles a token's scopes grant, from `scope` (space-separated), `scp` and `roles`. */
  private profilesOf(claims: Record<string, unknown>): Set<Profile> {
    const granted = new Set<Profile>();
    for (const scope of scopesOf(claims)) {
      for (const profile of this.settings?.scopeProfiles.get(scope) ?? []) granted.add(profile);
    }
    return granted;
  }

  private async verifyJwt(
    token: string,
    settings: OAuthSettings,
    jwksUri: string,
    audiences: readonly string[],
  ): Promise<TokenCheck> {
    this.keys ??= createRemoteJWKSet(new URL(jwksUri), {
      timeoutDuration: settings.httpTimeoutMs,
      cooldownDuration: JWKS_COOLDOWN_MS,
      cacheMaxAge: JWKS_MAX_AGE_MS,
    });
    try {
      const { payload, protectedHeader } = await jwtVerify(token, this.keys, {
        issuer: settings.issuer,
        audience: [...audiences],
        algorithms: [...settings.algorithms],
        clockTolerance: settings.clockSkewSeconds,
        requiredClaims: ['exp'],
      });
      const typ = protectedHeader.typ?.toLowerCase();
      if (typ !== undefined && !ACCESS_TOKEN_TYPES.has(typ)) {
        return {
          outcome: 'invalid',
          reason: `a token of type ${safe(typ)} is not an access token`,
        };
      }
      return { outcome: 'ok', principal: this.principalOf(payload) };
    } catch (error) {
      return jwtFailure(error, settings.httpTimeoutMs);
    }
  }

  private async introspect(
    token: string,
    settings: OAuthSettings,
    metadata: IssuerMetadata,
    audiences: readonly string[],
  ): Promise<TokenCheck> {
    const url = settings.introspection?.url ?? metadata.introspectionEndpoint;
    if (!settings.introspection || url === undefined) {
      return { outcome: 'invalid', reason: 'the token is not a JWT and is not an API key' };
    }
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = this.introspected.get(key);
    if (cached && cached.until > Date.now()) {
      return this.introspectionCheck(cached.answer, settings, audiences);
    }
    let answer: Record<string, unknown>;
    try {
      const { clientId, clientSecret } = settings.introspection;
      const credentials = `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`;
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(credentials).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
        signal: AbortSignal.timeout(settings.httpTimeoutMs),
        redirect: 'error',
      });
      if (!response.ok) throw new Error(`introspection answered HTTP ${response.status}`);
      answer = (await response.json()) as Record<string, unknown>;
      if (typeof answer !== 'object' || answer === null) throw new Error('not a JSON object');
    } catch (error) {
      this.logger.warn(`token introspection failed: ${describe(error)}`);
      return { outcome: 'unavailable', reason: 'the token introspection endpoint did not answer' };
    }
    // The answer is kept, not the verdict: the audience is checked again on every use.
    const exp = typeof answer.exp === 'number' ? answer.exp * 1000 : Infinity;
    const until =
      answer.active === true
        ? Math.min(exp, Date.now() + INTROSPECTION_CACHE_MS)
        : Date.now() + INTROSPECTION_NEGATIVE_CACHE_MS;
    if (this.introspected.size >= INTROSPECTION_CACHE_ENTRIES) {
      // Oldest first: Map keeps insertion order.
      this.introspected.delete(this.introspected.keys().next().value!);
    }
    this.introspected.set(key, { answer, until });
    return this.introspectionCheck(answer, settings, audiences);
  }

  private introspectionCheck(
    answer: Record<string, unknown>,
    settings: OAuthSettings,
    accepted: readonly string[],
  ): TokenCheck {
    if (answer.active !== true) return { outcome: 'invalid', reason: 'the token is not active' };
    const now = Date.now() / 1000;
    const skew = settings.clockSkewSeconds;
    if (typeof answer.exp === 'number' && answer.exp + skew < now) {
      return { outcome: 'invalid', reason: 'the token has expired' };
    }
    if (typeof answer.nbf === 'number' && answer.nbf - skew > now) {
      return { outcome: 'invalid', reason: 'the token is not valid yet' };
    }
    if (answer.iss !== undefined && answer.iss !== settings.issuer) {
      return { outcome: 'invalid', reason: 'the token was issued by another authorization server' };
    }
    const aud = answer.aud;
    const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : undefined;
    if (audiences !== undefined && !audiences.some((a) => accepted.includes(String(a)))) {
      return { outcome: 'invalid', reason: 'the token is not meant for this resource (aud)' };
    }
    return { outcome: 'ok', principal: this.principalOf(answer) };
  }

  private principalOf(claims: JWTPayload | Record<string, unknown>): Principal {
    const clientId = firstString(claims, ['client_id', 'azp', 'cid', 'appid']);
    const subject = firstString(claims, ['sub']) ?? clientId ?? 'unknown';
    return {
      name: `oauth:${subject}`,
      via: 'token',
      profiles: this.profilesOf(claims),
      subject,
      clientId,
      scopes: scopesOf(claims),
      groups: groupsOf(claims, this.settings!.groupsClaim),
    };
  }

  /** The issuer's metadata (its endpoints), for a browser that signs in there. */
  issuerMetadata(): Promise<IssuerMetadata> {
    return this.metadata();
  }

  /** The issuer's metadata, fetched once; after a failure, again after a few seconds. */
  private metadata(): Promise<IssuerMetadata> {
    const settings = this.settings!;
    const current = this.discovery;
    if (
      current &&
      (current.failedAt === undefined || Date.now() - current.failedAt < DISCOVERY_RETRY_MS)
    ) {
      return current.metadata;
    }
    const attempt: { metadata: Promise<IssuerMetadata>; failedAt?: number } = {
      metadata: discover(settings),
    };
    attempt.metadata.catch(() => (attempt.failedAt = Date.now()));
    this.discovery = attempt;
    return attempt.metadata;
  }
}

/** The reason a JWT was refused, or `unavailable` when the keys could not be fetched. */
function jwtFailure(error: unknown, timeoutMs: number): TokenCheck {
  if (error instanceof errors.JWTExpired)
    return { outcome: 'invalid', reason: 'the token has expired' };
  if (error instanceof errors.JWTClaimValidationFailed) {
    const reasons: Record<string, string> = {
      iss: 'the token was issued by another authorization server',
      aud: 'the token is not meant for this resource (aud)',
      nbf: 'the token is not valid yet',
      iat: 'the token was issued in the future',
      exp: 'the token has no expiry',
    };
    return {
      outcome: 'invalid',
      reason: reasons[error.claim] ?? `the token's ${safe(error.claim)} claim is not acceptable`,
    };
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return {
      outcome: 'invalid',
      reason: 'the token is signed with an algorithm this server does not accept',
    };
  }
  if (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return {
      outcome: 'invalid',
      reason: "no key of the authorization server matches the token's kid",
    };
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return { outcome: 'invalid', reason: 'the token signature does not verify' };
  }
  if (error instanceof errors.JWKSTimeout) {
    return {
      outcome: 'unavailable',
      reason: `the authorization server's keys (JWKS) did not arrive within ${timeoutMs} ms`,
    };
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return { outcome: 'invalid', reason: 'the token is not a well-formed JWT' };
  }
  if (error instanceof errors.JOSENotSupported) {
    return {
      outcome: 'invalid',
      reason: 'the token uses a key or algorithm this server does not support',
    };
  }
  // Anything else came from fetching the key set: the network, a non-200, a bad document.
  return {
    outcome: 'unavailable',
    reason: "the authorization server's keys (JWKS) could not be fetched",
  };
}

/** Groups of a token: its `claim`, a list of names or one space-separated text. */
export function groupsOf(claims: Record<string, unknown>, claim: string): string[] {
  const value = claims[claim];
  const groups =
    typeof value === 'string'
      ? value.split(/[ \t]+/)
      : Array.isArray(value)
        ? value.filter((g): g is string => typeof g === 'string')
        : [];
  return groups.filter((g) => g !== '');
}

/** Scopes of a token: `scope` (RFC 8693/9068, space-separated), `scp` (Entra ID, Okta), `roles` (Entra app roles). */
export function scopesOf(claims: Record<string, unknown>): string[] {
  const scopes: string[] = [];
  for (const name of ['scope', 'scp', 'roles']) {
    const value = claims[name];
    if (typeof value === 'string') scopes.push(...value.split(/[ \t]+/));
    else if (Array.isArray(value))
      scopes.push(...value.filter((s): s is string => typeof s === 'string'));
  }
  return scopes.filter((s) => s !== '');
}

function firstString(
  claims: Record<string, unknown>,
  names: readonly string[],
): string | undefined {
  for (const name of names) {
    const value = claims[name];
    if (typeof value === 'string' && value !== '') return safe(value);
  }
  return undefined;
}

/** A claim as it may appear in logs and audit rows: printable, bounded. */
function safe(value: string): string {
  return value.replace(/[^\x20-\x7E]|["\\]/g, '?').slice(0, 200);
}
