import { type DoorRoute, frontDoor, type RouteHandlers } from '../common/front-door';
import type { FrontDoor, RequestObserver } from '../common/http-server';
import { MCP_ROUTE_PATHS } from '../auth/mcp-routes';

/**
 * The MCP endpoints ahead of Express's router (src/common/front-door.ts): a request whose
 * path is exactly one of the profiles' endpoints (`/mcp`, `/readonly/mcp`, ...) goes
 * straight to its McpController route, guards and filter included. Any other path (a
 * trailing slash, another case, an absolute-form URL, the secret GPT route, unknown MCP
 * paths) goes on to Express and the Nest routes. The MCP code reads nothing Express adds to
 * a request or a response (it answers with Node's `writeHead` and `end`), so the request
 * keeps Node's prototypes.
 */
export function mcpFastPath(
  handlers: RouteHandlers,
  observers: readonly RequestObserver[],
): FrontDoor {
  const routes: DoorRoute[] = MCP_ROUTE_PATHS.map((path) => ({ method: 'ALL', path: `/${path}` }));
  return frontDoor(handlers, { observers, routes });
}
