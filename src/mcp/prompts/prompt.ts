import type { GetPromptResult, PromptMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Access } from '../../documents/access';
import { supportsResourceLinks } from '../../transport/protocol-version';
import type { McpProfile } from '../../auth/mcp-routes';
import { resourceLink } from '../resources/document-resources';

/** Where `completion/complete` takes the values of an argument from. */
export type ArgumentCompletion = 'document_id' | 'folder';

/** One argument of a prompt: what `prompts/list` shows, and how it is completed. */
export interface PromptArgumentSpec {
  readonly name: string;
  /** Written for the person filling it in. */
  readonly description: string;
  readonly required: boolean;
  /** Ids or folders from the id index; absent for free text (no suggestions). */
  readonly completion?: ArgumentCompletion;
}

/** What a prompt knows about the request that renders it. */
export interface PromptContext {
  readonly profile: McpProfile;
  /** The request's protocol version: what content types its messages may hold. */
  readonly protocolVersion: string;
  readonly signal: AbortSignal;
  /** What the caller may read (the access policy): a prompt embeds nothing else. */
  readonly access: Access;
}

/**
 * One MCP prompt (docs/mcp.md): a conversation starter a person picks (a slash command in
 * most clients), rendered from its arguments into messages. Prompts read the knowledge
 * base through services only; they never write. An argument the prompt cannot use is a
 * `DomainError` INVALID_ARGUMENT naming it (the registry answers -32602).
 */
export abstract class McpPrompt {
  abstract readonly name: string;
  abstract readonly title: string;
  /** What it does, for the person choosing among prompts. */
  abstract readonly description: string;
  abstract readonly arguments: readonly PromptArgumentSpec[];

  /** The messages for `args` (every required argument present, no unknown one). */
  abstract render(
    args: Readonly<Record<string, string>>,
    context: PromptContext,
  ): Promise<Omit<GetPromptResult, 'messages'> & { messages: PromptMessage[] }>;
}

/** A user message holding one content item. */
export function userMessage(content: PromptMessage['content']): PromptMessage {
  return { role: 'user', content };
}

/**
 * A user message pointing at a document: a `resource_link` from 2025-06-18 on, a text line
 * with the same link for clients of earlier revisions (which have no such content type).
 */
export function linkMessage(
  document: { document_id: string; title?: string },
  description: string | undefined,
  context: PromptContext,
): PromptMessage {
  const link = resourceLink(document, description);
  if (supportsResourceLinks(context.protocolVersion)) return userMessage(link);
  const text = `Document ${document.document_id}${document.title ? ` (${document.title})` : ''}: ${link.uri}${description ? `\n${description}` : ''}`;
  return userMessage({ type: 'text', text });
}
