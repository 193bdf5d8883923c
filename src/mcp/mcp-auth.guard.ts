import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { timingSafeEqual } from 'node:crypto';
import {
  digest,
  LOCAL_PRINCIPAL,
  presentedCredential,
  type Principal,
} from '../auth/api-key.service';
import { Authenticator } from '../auth/authenticator';
import { isLocalPeer, KEY_REQUIRED_BY_POLICY, LOCAL_AGENT_HEADER } from '../auth/local-agent';
import { API_KEY_CHALLENGE, routePathOf } from '../auth/protected-resource';
import { RETRY_AFTER_SECONDS } from '../common/fault';
import { pathOf } from '../common/http-server';
import { AppConfig } from '../config/app-config';
import { AccessPolicyService } from '../documents/access-policy.service';
import { HTTP_REFUSAL, McpHttpException } from '../transport/json-rpc-error';
import { MCP_PROFILE, MCP_SECRET_ROUTE } from './mcp-endpoint.decorator';
import type { McpProfile } from '../auth/mcp-routes';
import type { McpRequest } from './mcp-request';

/** Who calls through the secret GPT route: logs and audit rows name it, never the token. */
export const GPT_ROUTE_PRINCIPAL: Principal = {
  name: 'gpt-route',
  via: 'route',
  profiles: new Set(['gpt']),
};

/** The 404 of an unknown path, also given for a wrong secret-route token. */
export function unknownPath(): McpHttpException {
  return new McpHttpException(
    404,
    'Not Found: the MCP endpoints are /mcp, /readonly/mcp, /gpt/mcp and /gpt-full/mcp (also /mcp-readonly, /mcp-gpt and /mcp-gpt-full)',
  );
}

/**
 * API keys and access tokens on MCP endpoints (docs/mcp.md): missing or wrong ⇒ 401 (JSON,
 * `WWW-Authenticate`, never SSE: the filter frames it), valid but without the endpoint's
 * profile ⇒ 403 (`insufficient_scope` for a token), a token that cannot be checked now ⇒
 * 503. On the secret GPT route the path token replaces the key: wrong or unset ⇒ 404,
 * exactly like an unknown path. CORS preflights carry no credentials and pass. An agent
 * relaying from this machine without a key (src/local-server/) is the local user unless an
 * access policy is in force (401).
 */
@Injectable()
export class McpAuthGuard implements CanActivate {
  private readonly tokenDigest: Buffer | undefined;
  private readonly localDigest: Buffer | undefined;

  constructor(
    private readonly reflector: Reflector,
    private readonly auth: Authenticator,
    private readonly policy: AccessPolicyService,
    config: AppConfig,
  ) {
    this.tokenDigest =
      config.gptRouteToken === undefined ? undefined : digest(config.gptRouteToken);
    this.localDigest =
      config.localAgentToken === undefined ? undefined : digest(config.localAgentToken);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<McpRequest>();
    const profile = this.reflector.get<McpProfile | undefined>(MCP_PROFILE, context.getHandler());
    // Unknown paths carry no profile: their handler answers 404 whoever asks.
    if (profile === undefined) return true;
    if (this.reflector.get<boolean>(MCP_SECRET_ROUTE, context.getHandler())) {
      const token = request.params?.token;
      if (this.tokenDigest === undefined || typeof token !== 'string') throw unknownPath();
      if (!timingSafeEqual(digest(token), this.tokenDigest)) throw unknownPath();
      request.principal = GPT_ROUTE_PRINCIPAL;
      return true;
    }
    await this.admit(request, profile);
    return true;
  }

  /**
   * Sets `request.principal` when the request's key or token grants `profile`; throws the
   * 401 / 403 / 503 otherwise. A CORS preflight carries no credentials and passes.
   */
  private async admit(request: McpRequest, profile: McpProfile): Promise<void> {
    if (request.method === 'OPTIONS') return;
    if (this.isLocalAgent(request)) {
      if (this.policy.active) {
        throw new McpHttpException(401, `Unauthorized: ${KEY_REQUIRED_BY_POLICY}`, HTTP_REFUSAL, {
          'WWW-Authenticate': API_KEY_CHALLENGE,
        });
      }
      request.principal = LOCAL_PRINCIPAL;
      return;
    }
    // Express's `path` on the routed path; a front door leaves Node's request, whose URL is the path.
    const path = request.path ?? pathOf(request.url);
    const admission = await this.auth.admit(request.headers, profile, routePathOf(path));
    switch (admission.kind) {
      case 'ok':
        request.principal = admission.principal;
        return;
      case 'missing':
        throw new McpHttpException(
          401,
          this.auth.resources
            ? 'Unauthorized: an access token (Authorization: Bearer) or an API key (X-API-Key) is required'
            : 'Unauthorized: an API key is required (X-API-Key header or Authorization: Bearer)',
          HTTP_REFUSAL,
          { 'WWW-Authenticate': admission.challenge },
        );
      case 'invalid':
        throw new McpHttpException(
          401,
          admission.reason === undefined
            ? 'Unauthorized: the API key is not valid'
            : `Unauthorized: the access token is not valid: ${admission.reason}`,
          HTTP_REFUSAL,
          { 'WWW-Authenticate': admission.challenge },
        );
      case 'forbidden':
        throw new McpHttpException(
          403,
          admission.challenge === undefined
            ? `Forbidden: key "${admission.principal.name}" does not grant the ${profile} profile`
            : `Forbidden: insufficient_scope: the ${profile} profile needs the scope ${admission.scope ?? '(none maps to it)'}`,
          HTTP_REFUSAL,
          admission.challenge === undefined ? {} : { 'WWW-Authenticate': admission.challenge },
        );
      case 'unavailable':
        throw new McpHttpException(
          503,
          `Service unavailable: the access token cannot be checked right now (${admission.reason}); retry in ${RETRY_AFTER_SECONDS} seconds`,
          HTTP_REFUSAL,
          { 'Retry-After': String(RETRY_AFTER_SECONDS) },
        );
      default: {
        const unknown: never = admission;
        throw new Error(`unknown admission ${String(unknown)}`);
      }
    }
  }

  /**
   * Whether the request comes from an agent on this machine that showed the token of
   * DATA_DIR/server.json and no other credential (a key, when given, decides alone).
   */
  private isLocalAgent(request: McpRequest): boolean {
    const shown = request.headers[LOCAL_AGENT_HEADER];
    if (this.localDigest === undefined || typeof shown !== 'string') return false;
    if (presentedCredential(request.headers) !== undefined) return false;
    const socket = request.socket;
    if (!isLocalPeer(socket?.remoteAddress, socket?.localAddress)) return false;
    return timingSafeEqual(digest(shown), this.localDigest);
  }
}
