import type { OAuthSettings } from '../config/auth-config';

/** What this server needs of the authorization server's metadata (RFC 8414, OpenID Discovery). */
export interface IssuerMetadata {
  readonly jwksUri: string | undefined;
  readonly introspectionEndpoint: string | undefined;
  /** Where a browser signs in (the console's authorization-code flow). */
  readonly authorizationEndpoint: string | undefined;
  readonly tokenEndpoint: string | undefined;
}

/**
 * RFC 8414 and OpenID Connect Discovery, in the order the MCP authorization specification
 * gives clients: for an issuer with a path, the path-inserted forms first, then the
 * OpenID-appended one (Keycloak's `/realms/x/.well-known/openid-configuration`).
 */
export function discoveryUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const origin = url.origin;
  if (path === '') {
    return [
      `${origin}/.well-known/oauth-authorization-server`,
      `${origin}/.well-known/openid-configuration`,
    ];
  }
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

export async function discover(settings: OAuthSettings): Promise<IssuerMetadata> {
  const problems: string[] = [];
  for (const url of discoveryUrls(settings.issuer)) {
    let document: Record<string, unknown>;
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(settings.httpTimeoutMs),
      });
      if (!response.ok) {
        problems.push(`${url}: HTTP ${response.status}`);
        continue;
      }
      document = (await response.json()) as Record<string, unknown>;
    } catch (error) {
      problems.push(`${url}: ${describe(error)}`);
      continue;
    }
    // RFC 8414 §3.3: the metadata must name the very issuer it was fetched for.
    if (document.issuer !== settings.issuer) {
      throw new Error(`${url} names issuer ${String(document.issuer)}, not ${settings.issuer}`);
    }
    const jwksUri = settings.jwksUri ?? stringOf(document.jwks_uri);
    const introspectionEndpoint = stringOf(document.introspection_endpoint);
    if (jwksUri === undefined && !settings.introspection) {
      throw new Error(`${url} has no jwks_uri; set OAUTH_JWKS_URI or introspection`);
    }
    return {
      jwksUri,
      introspectionEndpoint,
      authorizationEndpoint: stringOf(document.authorization_endpoint),
      tokenEndpoint: stringOf(document.token_endpoint),
    };
  }
  throw new Error(problems.join('; '));
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** An error's message with its cause's, for logs (never for clients: it may name hosts). */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
