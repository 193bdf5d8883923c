import type { JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/api-key.service';
import type { McpProfile } from '../auth/mcp-routes';
import type { Access } from '../documents/access';

/**
 * Which rules serve a request (docs/mcp.md): `legacy` for the `initialize`-based
 * revisions (2024-11-05 to 2025-11-25), `modern` for the stateless 2026-07-28 revision.
 */
export type Era = 'legacy' | 'modern';

/** Everything the dispatcher knows about one HTTP request to an MCP endpoint. */
export interface McpContext {
  readonly profile: McpProfile;
  /** The API key's principal; `local` with auth off, `gpt-route` on the secret route. */
  readonly principal: Principal;
  /** What the principal may read and write under the access policy (everything without one). */
  readonly access: Access;
  /**
   * The protocol version of this request: the `MCP-Protocol-Version` header (2025-03-26
   * when absent) in the legacy era, the `_meta` envelope's in the modern one.
   */
  readonly protocolVersion: string;
  readonly era: Era;
  /**
   * Aborts when the request is cancelled: in the 2026 era, when the client closes the
   * response. Never in the 2025 era, where a disconnection is not a cancellation.
   */
  readonly signal: AbortSignal;
  /**
   * Sends a notification (progress) before the answer, on its SSE stream. Absent when the
   * answer is plain JSON, which carries nothing but the answer.
   */
  readonly notify?: (notification: JSONRPCNotification) => void;
  /**
   * The client is an MCP Apps host (docs/mcp.md): it declared the `io.modelcontextprotocol/ui`
   * extension in `initialize` (2025) or in this request's client capabilities (2026).
   */
  readonly apps?: boolean;
}

/** The signal of a request that cannot be cancelled. */
export const NEVER_CANCELLED: AbortSignal = new AbortController().signal;
