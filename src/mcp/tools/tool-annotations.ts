import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';

/** Hints of a tool that only reads this server's documents. */
export const READ_ONLY = Object.freeze({
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
}) satisfies ToolAnnotations;

/**
 * Hints of a tool that writes: whether it may overwrite or delete what is there, whether
 * calling it again with the same arguments changes nothing more, and whether it reaches
 * outside this server (default: it does not).
 */
export function writes(hints: {
  destructive: boolean;
  idempotent: boolean;
  openWorld?: boolean;
}): ToolAnnotations {
  return {
    readOnlyHint: false,
    destructiveHint: hints.destructive,
    idempotentHint: hints.idempotent,
    openWorldHint: hints.openWorld ?? false,
  };
}
