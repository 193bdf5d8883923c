import type { ResourceLink, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { ToolName } from '../profiles';
import type { McpProfile } from '../../auth/mcp-routes';
import type { Access } from '../../documents/access';

/**
 * Reports how far a long call has got (`notifications/progress`): `progress` grows with
 * every report, `total` when known, `message` for a person to read.
 */
export type ProgressReporter = (progress: number, total?: number, message?: string) => void;

/** Who is calling a tool (for the audit trail and the write's `app.actor`), and the call's lifetime. */
export interface ToolContext {
  /** The API key's name (`local` with auth off, `gpt-route` on the secret route); never the key. */
  readonly actor: string;
  readonly profile: McpProfile;
  /** What the caller may read and write (the access policy); every document read asks it. */
  readonly access: Access;
  /** Aborts when the call is cancelled (the 2026 client closed its response stream). */
  readonly signal: AbortSignal;
  /** Present when the client asked for progress and the answer can carry it (SSE). */
  readonly progress?: ProgressReporter;
}

/**
 * One MCP tool: its contract (zod input and output schemas, turned into JSON Schema once at
 * start-up by the registry), what a model reads about it, and what it does. Tools call
 * services only. A failure the caller can act on is a `DomainError`: the MCP edge turns it
 * into an `isError` result; anything else is a server fault.
 */
export abstract class McpTool<
  I extends z.ZodObject = z.ZodObject,
  O extends z.ZodObject = z.ZodObject,
> {
  abstract readonly name: ToolName;
  abstract readonly title: string;
  /** Written for a language model: what it does, when to use it, its limits. */
  abstract readonly description: string;
  abstract readonly input: I;
  abstract readonly output: O;
  abstract readonly annotations: ToolAnnotations;
  /**
   * Argument names accepted in place of another (`path` for `document_id`), alias → field.
   * Each alias is also declared in `input` so the listing shows it.
   */
  abstract readonly aliases: Readonly<Record<string, string>>;

  abstract run(input: z.output<I>, context: ToolContext): Promise<z.output<O>>;

  /**
   * `resource_link` items for the documents a result names, added after the JSON text item
   * for clients of 2025-06-18 and later (structuredContent is unchanged).
   */
  links(_output: z.output<O>): ResourceLink[] {
    return [];
  }

  /** The document a call is about, for the tool-call log line. */
  documentIdOf(input: z.output<I>): string | undefined {
    const fields = input as Record<string, unknown>;
    const id = fields.document_id ?? fields.prefix;
    return typeof id === 'string' ? id : undefined;
  }
}
