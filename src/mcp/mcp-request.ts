import type { IncomingMessage } from 'node:http';
import type { Principal } from '../auth/api-key.service';

/**
 * An MCP request as the MCP code reads it: Node's request plus what routing and the guards
 * leave on it. A request Express routed is also Express's Request (with `path`); one a
 * front door took keeps Node's prototype, and the MCP code needs nothing more.
 */
export type McpRequest = IncomingMessage & {
  /** Always set on a request a server received (Node types it optional for client messages). */
  method: string;
  url: string;
  /** Who is calling, set by the key or token guard. */
  principal?: Principal;
  /** Route parameters: the secret GPT route's token. */
  params?: Record<string, string | string[] | undefined>;
  /** The path, on a request Express routed (Express's getter). */
  readonly path?: string;
};
