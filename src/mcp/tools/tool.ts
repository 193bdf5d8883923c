import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { McpProfile, ToolName } from '../profiles';

/** Who is calling a tool, for the audit trail and the write's `app.actor`. */
export interface ToolContext {
  /** The API key's name (`local` with auth off, `gpt-route` on the secret route); never the key. */
  readonly actor: string;
  readonly profile: McpProfile;
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

  /** The document a call is about, for the tool-call log line. */
  documentIdOf(input: z.output<I>): string | undefined {
    const fields = input as Record<string, unknown>;
    const id = fields.document_id ?? fields.prefix;
    return typeof id === 'string' ? id : undefined;
  }
}
