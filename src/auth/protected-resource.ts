import type { OAuthSettings } from '../config/auth-config';
import type { Profile } from '../config/config-values';
import { MCP_ROUTE_PATHS, MCP_ROUTES, type McpProfile, profileOfPath } from './mcp-routes';

export const PRM_PATH = '.well-known/oauth-protected-resource';

/** `WWW-Authenticate` of a 401 when only API keys are configured (unchanged since OAuth support came). */
export const API_KEY_CHALLENGE = 'Bearer realm="agent-data", charset="UTF-8"';

/** RFC 9728 Protected Resource Metadata, as served. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: string[];
  resource_name: string;
}

/**
 * The protected resources of this server (RFC 9728): the server as a whole (the admin API,
 * and any route for clients that use the origin as the resource), and each MCP endpoint,
 * whose resource identifier is `OAUTH_RESOURCE` plus its path. Metadata of a resource
 * `https://host/base/p` lives at `https://host/.well-known/oauth-protected-resource/base/p`.
 */
export class ProtectedResources {
  private readonly origin: string;
  private readonly basePath: string;
  /** {@link audiences} of each profile (`undefined`: the admin API), computed once. */
  private readonly audiencesOf: Map<McpProfile | undefined, readonly string[]>;

  constructor(private readonly settings: OAuthSettings) {
    const url = new URL(settings.resource);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    const profiles = [undefined, ...(Object.keys(MCP_ROUTES) as McpProfile[])];
    this.audiencesOf = new Map(profiles.map((profile) => [profile, this.audiencesFor(profile)]));
  }

  /** The resource identifier of an MCP route path (`readonly/mcp`), or of the whole server. */
  resourceOf(routePath?: string): string {
    return routePath === undefined
      ? this.settings.resource
      : `${this.settings.resource}/${routePath}`;
  }

  /**
   * The `aud` values a token may carry to be used on the routes of `profile` (RFC 8707):
   * `OAUTH_AUDIENCE` when set; else the server's resource identifier and the profile's own
   * (any of its paths), or, for the admin API (`undefined`), any MCP route's.
   */
  audiences(profile: McpProfile | undefined): readonly string[] {
    return this.audiencesOf.get(profile)!;
  }

  private audiencesFor(profile: McpProfile | undefined): readonly string[] {
    if (this.settings.audiences) return this.settings.audiences;
    const paths = profile === undefined ? MCP_ROUTE_PATHS : MCP_ROUTES[profile];
    return [this.resourceOf(), `${this.resourceOf()}/`, ...paths.map((p) => this.resourceOf(p))];
  }

  /** Where the metadata of that resource is served, as clients reach it. */
  metadataUrl(routePath?: string): string {
    const suffix = routePath === undefined ? '' : `/${routePath}`;
    return `${this.origin}/${PRM_PATH}${this.basePath}${suffix}`;
  }

  /**
   * The metadata document for a request path under the well-known prefix (`''` for the
   * root, `readonly/mcp`, or `base/readonly/mcp` when `OAUTH_RESOURCE` has a path and the
   * ingress passes it through); `undefined` for a path that names no resource.
   */
  metadataFor(pathAfterPrefix: string): ProtectedResourceMetadata | undefined {
    let path = pathAfterPrefix.replace(/^\/+|\/+$/g, '');
    const base = this.basePath.replace(/^\//, '');
    if (base !== '' && (path === base || path.startsWith(`${base}/`))) {
      path = path.slice(base.length).replace(/^\//, '');
    }
    if (path === '') {
      return this.document(
        this.settings.resource,
        [...this.settings.scopeProfiles.keys()],
        'all endpoints',
      );
    }
    const profile = profileOfPath(path);
    if (profile === undefined) return undefined;
    return this.document(this.resourceOf(path), this.scopesGranting(profile), `${profile} profile`);
  }

  /** Scopes that grant `profile`, in the order of `OAUTH_SCOPE_PROFILES`. */
  scopesGranting(profile: Profile): string[] {
    return [...this.settings.scopeProfiles]
      .filter(([, profiles]) => profiles.has(profile))
      .map(([scope]) => scope);
  }

  /**
   * `WWW-Authenticate` for a refusal on `routePath` (an MCP path, or `undefined` for the
   * admin API): `resource_metadata` and the one scope to ask for (the first that grants the
   * profile), with `error` and `error_description` when a token was presented (RFC 6750 §3).
   */
  challenge(
    profile: Profile,
    routePath: string | undefined,
    error?: { code: 'invalid_token' | 'insufficient_scope'; description: string },
  ): string {
    const parts = ['Bearer realm="agent-data"'];
    if (error) {
      parts.push(`error="${error.code}"`, `error_description="${quoted(error.description)}"`);
    }
    parts.push(`resource_metadata="${this.metadataUrl(routePath)}"`);
    const scope = this.scopesGranting(profile)[0];
    if (scope !== undefined) parts.push(`scope="${scope}"`);
    return parts.join(', ');
  }

  private document(resource: string, scopes: string[], what: string): ProtectedResourceMetadata {
    return {
      resource,
      authorization_servers: [this.settings.issuer],
      scopes_supported: scopes,
      bearer_methods_supported: ['header'],
      resource_name: `Agent Data knowledge base (${what})`,
    };
  }
}

/** The MCP route path of a request path (`/readonly/mcp` ⇒ `readonly/mcp`), if it is one. */
export function routePathOf(requestPath: string): string | undefined {
  const path = requestPath.replace(/^\/+|\/+$/g, '');
  return MCP_ROUTE_PATHS.includes(path) ? path : undefined;
}

function quoted(text: string): string {
  return text.replace(/[^\x20-\x7E]|["\\]/g, '?');
}
