import type { McpProfile } from '../auth/mcp-routes';

/** The eleven tools (docs/mcp.md). `move_document` is deliberately not one: it only ever failed. */
export const TOOL_NAMES = [
  'search_knowledge',
  'list_documents',
  'get_document',
  'get_document_for_rewrite',
  'batch_read',
  'follow_links',
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
  'follow_links',
];

/**
 * Which tools each profile exposes (docs/mcp.md): `tools/list` lists exactly these, in this
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
