import type { Profile } from '../config/app-config';

/** The MCP endpoints' profiles (`admin` grants the REST API, not an MCP endpoint). */
export type McpProfile = Exclude<Profile, 'admin'>;

/** The ten tools (SPEC §7). `move_document` is deliberately not one: it only ever failed. */
export const TOOL_NAMES = [
  'search_knowledge',
  'list_documents',
  'get_document',
  'get_document_for_rewrite',
  'batch_read',
  'upload_document',
  'update_document',
  'patch_document',
  'delete_document',
  'ingest_document',
] as const;

export type ToolName = (typeof TOOL_NAMES)[number];

const READ_TOOLS: readonly ToolName[] = [
  'search_knowledge',
  'list_documents',
  'get_document',
  'get_document_for_rewrite',
  'batch_read',
];

/**
 * Which tools each profile exposes (SPEC §5): `tools/list` lists exactly these, in this
 * order, and `tools/call` of any other tool is refused with -32601.
 */
export const PROFILE_TOOLS: Readonly<Record<McpProfile, readonly ToolName[]>> = {
  internal: TOOL_NAMES,
  readonly: READ_TOOLS,
  gpt: [...READ_TOOLS, 'upload_document', 'update_document', 'patch_document'],
  'gpt-full': TOOL_NAMES,
};

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

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
