import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthenticatedRequest } from '../auth/admin.guard';
import { ApiKeyService, type Principal } from '../auth/api-key.service';
import { AppConfig } from '../config/app-config';
import { McpHttpException } from '../transport/json-rpc-error';
import { MCP_PROFILE, MCP_SECRET_ROUTE } from './mcp-endpoint.decorator';
import type { McpProfile } from './profiles';

/** Who calls through the secret GPT route: logs and audit rows name it, never the token. */
export const GPT_ROUTE_PRINCIPAL: Principal = { name: 'gpt-route', profiles: new Set(['gpt']) };

/** The 404 of an unknown path, also given for a wrong secret-route token. */
export function unknownPath(): McpHttpException {
  return new McpHttpException(
    404,
    'Not Found: the MCP endpoints are /mcp, /readonly/mcp, /gpt/mcp and /gpt-full/mcp (also /mcp-readonly, /mcp-gpt and /mcp-gpt-full)',
  );
}

/**
 * API keys on MCP endpoints (SPEC §5): the key from `X-API-Key` or `Authorization: Bearer`,
 * compared in constant time; missing or wrong ⇒ 401 (JSON, `WWW-Authenticate`, never SSE:
 * the filter frames it), a key without the endpoint's profile ⇒ 403. On the secret GPT
 * route the path token replaces the key: wrong or unset ⇒ 404, exactly like an unknown path.
 * CORS preflights carry no credentials and pass.
 */
@Injectable()
export class McpAuthGuard implements CanActivate {
  private readonly tokenDigest: Buffer | undefined;

  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeyService,
    config: AppConfig,
  ) {
    this.tokenDigest =
      config.gptRouteToken === undefined ? undefined : digest(config.gptRouteToken);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const profile = this.reflector.get<McpProfile | undefined>(MCP_PROFILE, context.getHandler());
    // Unknown paths carry no profile: their handler answers 404 whoever asks.
    if (profile === undefined) return true;
    if (this.reflector.get<boolean>(MCP_SECRET_ROUTE, context.getHandler())) {
      const token = request.params.token;
      if (this.tokenDigest === undefined || typeof token !== 'string') throw unknownPath();
      if (!timingSafeEqual(digest(token), this.tokenDigest)) throw unknownPath();
      request.principal = GPT_ROUTE_PRINCIPAL;
      return true;
    }
    if (request.method === 'OPTIONS') return true;
    const result = this.keys.authenticate(request.headers);
    if (result.outcome !== 'ok') {
      throw new McpHttpException(
        401,
        result.outcome === 'missing'
          ? 'Unauthorized: an API key is required (X-API-Key header or Authorization: Bearer)'
          : 'Unauthorized: the API key is not valid',
      );
    }
    if (!ApiKeyService.allows(result.principal, profile)) {
      throw new McpHttpException(
        403,
        `Forbidden: key "${result.principal.name}" does not grant the ${profile} profile`,
      );
    }
    request.principal = result.principal;
    return true;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
