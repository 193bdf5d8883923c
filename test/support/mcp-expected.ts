/**
 * The eleven tools in the order `tools/list` gives them on the full endpoints (docs/mcp.md),
 * written out here rather than imported from src/ so that the tests state the contract.
 */
export const ALL_TOOLS = [
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
];
