import type { Profile } from '../config/config-values';

/** The MCP endpoints' profiles (`admin` grants the REST API, not an MCP endpoint). */
export type McpProfile = Exclude<Profile, 'admin'>;

/**
 * The paths of each profile's endpoint, the `/<name>/mcp` form first (MCP Inspector infers
 * the transport from a URL ending in `/mcp`), then the older `/mcp-<name>` one.
 */
export const MCP_ROUTES: Readonly<Record<McpProfile, readonly string[]>> = {
  internal: ['mcp'],
  readonly: ['readonly/mcp', 'mcp-readonly'],
  gpt: ['gpt/mcp', 'mcp-gpt'],
  'gpt-full': ['gpt-full/mcp', 'mcp-gpt-full'],
};

/** Every MCP endpoint path (the secret route aside), without the leading slash. */
export const MCP_ROUTE_PATHS: readonly string[] = Object.values(MCP_ROUTES).flat();

/** The profile served at `path` (no leading slash), if it is an MCP endpoint. */
export function profileOfPath(path: string): McpProfile | undefined {
  for (const [profile, paths] of Object.entries(MCP_ROUTES)) {
    if (paths.includes(path)) return profile as McpProfile;
  }
  return undefined;
}
