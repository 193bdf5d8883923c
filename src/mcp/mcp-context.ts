import type { Principal } from '../auth/api-key.service';
import type { McpProfile } from './profiles';

/** Everything the dispatcher knows about one HTTP request to an MCP endpoint. */
export interface McpContext {
  readonly profile: McpProfile;
  /** The API key's principal; `local` with auth off, `gpt-route` on the secret route. */
  readonly principal: Principal;
  /** `MCP-Protocol-Version` of this request, or 2025-03-26 when absent. */
  readonly protocolVersion: string;
}
