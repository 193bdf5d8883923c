import type { ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { PROFILE_TOOLS } from './profiles';
import { type McpProfile } from '../auth/mcp-routes';
import { SERVER_VERSION } from '../common/version';

export const SERVER_NAME = 'agent-data';
export const SERVER_TITLE = 'Agent Data knowledge base';

/** `serverInfo` of `initialize`, and `io.modelcontextprotocol/serverInfo` of 2026 results. */
export const SERVER_INFO = { name: SERVER_NAME, title: SERVER_TITLE, version: SERVER_VERSION };

/**
 * What every endpoint serves in the 2025 era over HTTP (docs/mcp.md: resources, prompts and
 * completions are read-only features, so every profile has them; the tools differ by
 * profile, their presence does not). Nothing is pushed there: those endpoints are
 * stateless, with no stream to push on, so neither `listChanged` nor `subscribe` is offered.
 */
export const CAPABILITIES = Object.freeze({
  tools: { listChanged: false },
  resources: { subscribe: false, listChanged: false },
  prompts: { listChanged: false },
  completions: {},
}) satisfies ServerCapabilities;

/**
 * What `server/discover` says (2026-07-28, HTTP and stdio): documents can be followed with
 * `subscriptions/listen` (`resourceSubscriptions`, `resourcesListChanged`). Tools and prompts
 * never change while the server runs: their `listChanged` stays false.
 */
export const MODERN_CAPABILITIES = Object.freeze({
  ...CAPABILITIES,
  resources: { subscribe: true, listChanged: true },
}) satisfies ServerCapabilities;

/**
 * What `initialize` says on stdio (2025 era): the session is a connection, so
 * `resources/subscribe` works there; list changes are not pushed in that era.
 */
export const STDIO_LEGACY_CAPABILITIES = Object.freeze({
  ...CAPABILITIES,
  resources: { subscribe: true, listChanged: false },
  // Only to say that subscriptions were dropped for falling behind (mcp-stdio.ts).
  logging: {},
}) satisfies ServerCapabilities;

const WRITES =
  'Writes are committed to PostgreSQL before the tool answers, so get_document and list_documents see them at once; semantic search catches up within a few seconds.';

/** The `instructions` of `initialize`: what the knowledge base is and how to use this profile's tools. */
export function instructionsFor(profile: McpProfile): string {
  const tools = PROFILE_TOOLS[profile];
  const has = (name: string) => (tools as readonly string[]).includes(name);
  const lines = [
    'Agent Data is a knowledge base of markdown documents addressed by path-like ids such as knowledge/current-state/reports/phase-2.md (folders are id prefixes ending in "/").',
    'To find information: search_knowledge for a question in natural language (semantic search over the text), list_documents to browse a folder by prefix, then get_document to read one document or batch_read to read up to 20 at once.',
    'Every document is also a resource, kb://<document_id> (markdown), and every folder kb://<folder>/ (an index); the prompts answer_question, summarize_folder and review_document start common tasks.',
  ];
  if (has('update_document') || has('patch_document')) {
    lines.push(
      'To change a document: read it with get_document_for_rewrite (full text and revision), then use patch_document for a targeted edit (old_str must occur exactly once) or update_document to replace the content; pass the revision you read as expected_revision so a concurrent change is never overwritten.',
    );
  }
  if (has('upload_document')) {
    lines.push('To add a document: upload_document with a new id and markdown content.');
  }
  if (has('delete_document')) {
    lines.push('delete_document is a soft delete that an operator can undo.');
  }
  if (has('ingest_document')) {
    lines.push(
      'ingest_document fetches a web page from an allowed host and stores its text as a document.',
    );
  }
  if (has('follow_links')) {
    lines.push(
      'Documents link to one another (markdown links, [[wikilinks]], kb:// URIs): get_document says how many links and backlinks a document has, and follow_links walks them, each neighbour with the passage that links it.',
    );
  }
  if (has('upload_document') || has('update_document') || has('delete_document')) {
    lines.push(WRITES);
  } else lines.push('This endpoint is read-only.');
  lines.push(
    'Tool failures come back as results with isError: true and {"error": {"code", "message", "hint"}}: read the hint, fix the call and retry.',
  );
  return lines.join('\n');
}
