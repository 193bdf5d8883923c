import type { INestApplication } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AuthenticatedRequest } from '../auth/admin.guard';
import { enterRoute, type FrontDoor, pathOf, type RequestObserver } from '../common/http-server';
import { McpExceptionFilter } from '../transport/mcp-exception.filter';
import { OriginGuard } from '../transport/origin.guard';
import { McpAuthGuard } from './mcp-auth.guard';
import { McpController } from './mcp.controller';
import { MCP_ROUTES, type McpProfile } from '../auth/mcp-routes';

/**
 * The MCP endpoints without Express's router or Nest's. The HTTP server hands
 * every request to this front door first; a request whose path is exactly one of the
 * endpoints (`/mcp`, `/readonly/mcp`, ...) is answered here with what the Nest route would
 * run, in the same order: the request observers (request id, access log, metrics), the
 * Origin guard, the API-key / token guard, {@link McpController.serve}, and
 * {@link McpExceptionFilter} for any error. The instances are resolved once, here; a
 * request costs a map lookup instead of Express's middleware chain, a walk over every
 * registered route, the guards' metadata reads and Nest's execution context. Any other path
 * (a trailing slash, another case, an absolute-form URL, the secret GPT route, unknown MCP
 * paths) goes on to Express and the Nest routes, which behave exactly as before.
 *
 * The MCP code reads nothing that Express adds to a request or a response: it answers with
 * Node's `writeHead` and `end`. What the observers read is set here as Express would set it.
 */
export function mcpFastPath(
  app: INestApplication,
  observers: readonly RequestObserver[],
): FrontDoor {
  const profiles = new Map<string, McpProfile>(
    Object.entries(MCP_ROUTES).flatMap(([profile, paths]) =>
      paths.map((path) => [`/${path}`, profile as McpProfile] as const),
    ),
  );
  const origin = app.get(OriginGuard);
  const auth = app.get(McpAuthGuard);
  const controller = app.get(McpController);
  const filter = app.get(McpExceptionFilter);

  const serve = async (
    request: AuthenticatedRequest,
    response: Response,
    profile: McpProfile,
    path: string,
  ) => {
    origin.check(request, response);
    await auth.admit(request, profile, path);
    await controller.serve(request, response, profile);
  };

  return (incoming, outgoing) => {
    const path = pathOf(incoming.url ?? '');
    const profile = profiles.get(path);
    if (profile === undefined) return false;
    const request = incoming as Request;
    const response = outgoing as Response;
    enterRoute(request, response, path, {}, observers);
    serve(request as AuthenticatedRequest, response, profile, path)
      .catch((error: unknown) => filter.reply(error, response))
      // The filter answers every error; should writing that answer fail, the socket goes.
      .catch(() => response.destroy());
    return true;
  };
}
