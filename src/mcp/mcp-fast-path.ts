import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { AuthenticatedRequest } from '../auth/admin.guard';
import { McpExceptionFilter } from '../transport/mcp-exception.filter';
import { OriginGuard } from '../transport/origin.guard';
import { McpAuthGuard } from './mcp-auth.guard';
import { McpController } from './mcp.controller';
import { MCP_ROUTES, type McpProfile } from './profiles';

/**
 * The MCP endpoints without Nest's router (issue 12): one Express middleware, mounted at
 * bootstrap ahead of every route, answers a request whose path is exactly one of the
 * endpoints (`/mcp`, `/readonly/mcp`, ...) with what the Nest route would run, in the same
 * order: the Origin guard, the API-key / token guard, {@link McpController.serve}, and
 * {@link McpExceptionFilter} for any error. The instances are resolved once, here; a
 * request costs a map lookup instead of a walk over every registered route, the guards'
 * metadata reads and Nest's execution context. Any other path (a trailing slash, another
 * case, the secret GPT route, unknown MCP paths) goes on to the Nest routes, which behave
 * exactly as before.
 */
export function mcpFastPath(app: INestApplication) {
  const profiles = new Map<string, McpProfile>(
    Object.entries(MCP_ROUTES).flatMap(([profile, paths]) =>
      paths.map((path) => [`/${path}`, profile as McpProfile] as const),
    ),
  );
  const origin = app.get(OriginGuard);
  const auth = app.get(McpAuthGuard);
  const controller = app.get(McpController);
  const filter = app.get(McpExceptionFilter);

  const serve = async (request: AuthenticatedRequest, response: Response, profile: McpProfile) => {
    origin.check(request, response);
    await auth.admit(request, profile);
    await controller.serve(request, response, profile);
  };

  return (request: Request, response: Response, next: NextFunction): void => {
    const path = request.path;
    const profile = profiles.get(path);
    if (profile === undefined) return next();
    // What a matched Express route leaves on the request: the metrics label reads it.
    (request as Request & { route: { path: string } }).route = { path };
    request.params = {};
    serve(request as AuthenticatedRequest, response, profile)
      .catch((error: unknown) => filter.reply(error, response))
      // The filter answers every error; should writing that answer fail, the socket goes.
      .catch(() => response.destroy());
  };
}
