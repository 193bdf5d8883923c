import {
  ConfigError,
  httpUrl,
  integer,
  list,
  PROFILES,
  type Profile,
  type Reader,
} from './config-values';
import { defaultOf, type VariableName } from './variables';

/** OAuth 2.1 resource-server settings (docs/oauth.md); absent when `OAUTH_ISSUER` is unset. */
export interface OAuthSettings {
  /** `OAUTH_ISSUER`: the authorization server's issuer identifier, compared exactly with `iss`. */
  readonly issuer: string;
  /**
   * `OAUTH_RESOURCE`: the canonical URL clients use for this server (scheme, host, optional
   * port and base path; behind an ingress not the pod's address). The MCP routes' resource
   * identifiers are this plus their path.
   */
  readonly resource: string;
  /**
   * `OAUTH_AUDIENCE`: `aud` values accepted. Unset: the resource and each MCP route's
   * resource identifier (RFC 8707), which is what MCP clients ask tokens for.
   */
  readonly audiences: readonly string[] | undefined;
  /** `OAUTH_SCOPE_PROFILES`: the profiles each scope grants, in the order written. */
  readonly scopeProfiles: ReadonlyMap<string, ReadonlySet<Profile>>;
  /** `OAUTH_GROUPS_CLAIM`: the claim holding a token's groups (`group:G` of an access policy). */
  readonly groupsClaim: string;
  /**
   * `CONSOLE_OAUTH_CLIENT_ID`: the console's client at the issuer (public: authorization code
   * with PKCE); unset, the console signs in with API keys only.
   */
  readonly consoleClientId: string | undefined;
  /** `OAUTH_JWKS_URI`: overrides the `jwks_uri` of the issuer's metadata. */
  readonly jwksUri: string | undefined;
  /** `OAUTH_ALGORITHMS`: JWS algorithms accepted; asymmetric only. */
  readonly algorithms: readonly string[];
  /** `OAUTH_CLOCK_SKEW_SECONDS`: tolerance on `exp`, `nbf` and `iat`. */
  readonly clockSkewSeconds: number;
  /** `OAUTH_HTTP_TIMEOUT_MS`: bound of each call to the issuer (metadata, JWKS, introspection). */
  readonly httpTimeoutMs: number;
  /** Set when opaque tokens are to be introspected (RFC 7662). */
  readonly introspection: IntrospectionSettings | undefined;
}

export interface IntrospectionSettings {
  /** `OAUTH_INTROSPECTION_URL`; unset: the issuer metadata's `introspection_endpoint`. */
  readonly url: string | undefined;
  readonly clientId: string;
  readonly clientSecret: string;
}

/** `RATE_LIMIT_*`: at most `points` requests per `windowSeconds` per principal. */
export interface RateLimit {
  readonly points: number;
  readonly windowSeconds: number;
}

const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/**
 * The OAuth settings, or `undefined` without `OAUTH_ISSUER`. `defaultResource` is the
 * server's own loopback URL, good enough on a developer's machine; anywhere else
 * `OAUTH_RESOURCE` must be given.
 */
export function parseOAuth(
  read: Reader,
  defaultResource: string | undefined,
): OAuthSettings | undefined {
  const issuer = read('OAUTH_ISSUER');
  if (issuer === undefined) {
    for (const name of [
      'OAUTH_RESOURCE',
      'OAUTH_AUDIENCE',
      'OAUTH_INTROSPECTION_CLIENT_ID',
      'CONSOLE_OAUTH_CLIENT_ID',
    ] as const) {
      if (read(name) !== undefined) throw new ConfigError(name, 'needs OAUTH_ISSUER');
    }
    return undefined;
  }
  httpUrl('OAUTH_ISSUER', issuer, { query: false });
  const resourceRaw = read('OAUTH_RESOURCE') ?? defaultResource;
  if (resourceRaw === undefined) {
    throw new ConfigError(
      'OAUTH_RESOURCE',
      'is required with OAUTH_ISSUER when HOST is not a loopback address: the URL clients use to reach this server',
    );
  }
  const resource = httpUrl('OAUTH_RESOURCE', resourceRaw, { query: false }).replace(/\/+$/, '');
  const audience = read('OAUTH_AUDIENCE');
  const clientId = read('OAUTH_INTROSPECTION_CLIENT_ID');
  const clientSecret = read('OAUTH_INTROSPECTION_CLIENT_SECRET');
  const introspectionUrl = read('OAUTH_INTROSPECTION_URL');
  if ((clientId === undefined) !== (clientSecret === undefined)) {
    throw new ConfigError(
      clientId === undefined
        ? 'OAUTH_INTROSPECTION_CLIENT_ID'
        : 'OAUTH_INTROSPECTION_CLIENT_SECRET',
      'OAUTH_INTROSPECTION_CLIENT_ID and OAUTH_INTROSPECTION_CLIENT_SECRET go together',
    );
  }
  if (introspectionUrl !== undefined && clientId === undefined) {
    throw new ConfigError(
      'OAUTH_INTROSPECTION_URL',
      'needs OAUTH_INTROSPECTION_CLIENT_ID and OAUTH_INTROSPECTION_CLIENT_SECRET',
    );
  }
  const jwksUri = read('OAUTH_JWKS_URI');
  return {
    issuer,
    resource,
    audiences: audience === undefined ? undefined : list(audience),
    scopeProfiles: parseScopeProfiles(read('OAUTH_SCOPE_PROFILES')!),
    groupsClaim: read('OAUTH_GROUPS_CLAIM')!,
    consoleClientId: read('CONSOLE_OAUTH_CLIENT_ID'),
    jwksUri: jwksUri === undefined ? undefined : httpUrl('OAUTH_JWKS_URI', jwksUri),
    algorithms: algorithms(read('OAUTH_ALGORITHMS')),
    clockSkewSeconds: integer(read, 'OAUTH_CLOCK_SKEW_SECONDS', 0, 600),
    httpTimeoutMs: integer(read, 'OAUTH_HTTP_TIMEOUT_MS', 100, 60_000),
    introspection:
      clientId === undefined || clientSecret === undefined
        ? undefined
        : {
            url:
              introspectionUrl === undefined
                ? undefined
                : httpUrl('OAUTH_INTROSPECTION_URL', introspectionUrl),
            clientId,
            clientSecret,
          },
  };
}

/**
 * `kb.read:readonly;kb.write:gpt;kb.admin:internal,gpt-full,admin`: scope names (RFC 6749
 * `scope-token` characters) and the profiles each grants.
 */
export function parseScopeProfiles(raw: string): ReadonlyMap<string, ReadonlySet<Profile>> {
  const map = new Map<string, ReadonlySet<Profile>>();
  for (const entry of raw.split(';').map((e) => e.trim())) {
    if (entry === '') continue;
    const colon = entry.lastIndexOf(':');
    const scope = entry.slice(0, colon).trim();
    const profiles = list(entry.slice(colon + 1));
    if (colon <= 0 || !/^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/.test(scope) || profiles.length === 0) {
      throw new ConfigError(
        'OAUTH_SCOPE_PROFILES',
        `"${entry}" is not scope:profile[,profile...] (a scope has no spaces, quotes or backslashes)`,
      );
    }
    for (const profile of profiles) {
      if (!(PROFILES as readonly string[]).includes(profile)) {
        throw new ConfigError(
          'OAUTH_SCOPE_PROFILES',
          `unknown profile "${profile}" for scope ${scope} (profiles: ${PROFILES.join(', ')})`,
        );
      }
    }
    if (map.has(scope)) throw new ConfigError('OAUTH_SCOPE_PROFILES', `scope ${scope} twice`);
    map.set(scope, new Set(profiles as Profile[]));
  }
  if (map.size === 0) throw new ConfigError('OAUTH_SCOPE_PROFILES', 'maps no scope');
  return map;
}

/**
 * `120/60s`, `10/s`, `600/min`, `5000/h`; `0` or `off` turns the limit off. Unset (`given`
 * answers `undefined`): the table's default when `onByDefault`, else off.
 */
export function parseRateLimit(
  given: Reader,
  name: 'RATE_LIMIT_TOOL_CALLS' | 'RATE_LIMIT_ADMIN_WRITES',
  onByDefault: boolean,
): RateLimit | undefined {
  const raw = given(name)?.toLowerCase();
  if (raw === undefined)
    return onByDefault ? parseRateLimitValue(name, defaultOf(name)!) : undefined;
  return parseRateLimitValue(name, raw);
}

function parseRateLimitValue(name: VariableName, raw: string): RateLimit | undefined {
  if (raw === '0' || raw === 'off') return undefined;
  const match = /^(\d{1,7})\s*\/\s*(\d{0,6})\s*(s|sec|m|min|h)$/.exec(raw);
  const unit = match ? { s: 1, sec: 1, m: 60, min: 60, h: 3600 }[match[3]] : undefined;
  const points = match ? Number(match[1]) : 0;
  const count = match && match[2] !== '' ? Number(match[2]) : 1;
  if (!match || unit === undefined || points < 1 || count < 1 || count * unit > 86_400) {
    throw new ConfigError(
      name,
      `must be requests per window such as 120/60s, 10/s, 600/min or 5000/h (a window up to a day), or off; got "${raw}"`,
    );
  }
  return { points, windowSeconds: count * unit };
}

function algorithms(raw: string | undefined): string[] {
  if (raw === undefined) return ASYMMETRIC_ALGORITHMS;
  const chosen = list(raw);
  for (const alg of chosen) {
    if (!ASYMMETRIC_ALGORITHMS.includes(alg)) {
      throw new ConfigError(
        'OAUTH_ALGORITHMS',
        `"${alg}" is not accepted: only asymmetric algorithms (${ASYMMETRIC_ALGORITHMS.join(', ')})`,
      );
    }
  }
  if (chosen.length === 0) throw new ConfigError('OAUTH_ALGORITHMS', 'lists no algorithm');
  return chosen;
}
