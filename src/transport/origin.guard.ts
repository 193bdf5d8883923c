import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppConfig } from '../config/app-config';
import { McpHttpException } from './json-rpc-error';
import { isOriginAllowed } from './origin';

/**
 * DNS-rebinding protection (docs/mcp.md): a request whose `Origin` is present and not allowed
 * is refused with 403 before anything else. An allowed browser origin gets the CORS
 * headers it needs to read the answer. No `Origin` (non-browser clients) passes.
 */
@Injectable()
export class OriginGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}

  /** Throws 403 for a foreign `Origin`; adds the CORS headers for an allowed one. */
  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<IncomingMessage>();
    const response = http.getResponse<ServerResponse>();
    const origin = request.headers.origin;
    if (origin === undefined) return true;
    if (!isOriginAllowed(origin, this.config.allowedOrigins)) {
      throw new McpHttpException(
        403,
        `Forbidden: Origin ${JSON.stringify(origin.slice(0, 200))} is not allowed`,
      );
    }
    response.setHeader('Access-Control-Allow-Origin', origin);
    response.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Mcp-Session-Id');
    response.setHeader('Vary', 'Origin');
    return true;
  }
}
