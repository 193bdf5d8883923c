import type { Principal } from '../auth/api-key.service';
import type { RoutedRequest } from '../common/http-server';

/**
 * An MCP request as the MCP code reads it: Node's request plus what routing and the guards
 * leave on it. A request Express routed is also Express's Request (with `path`); one a
 * front door took keeps Node's prototype, and the MCP code needs nothing more.
 */
export type McpRequest = RoutedRequest & {
  /** Who is calling, set by the key or token guard. */
  principal?: Principal;
  /** The path, on a request Express routed (Express's getter). */
  readonly path?: string;
};
