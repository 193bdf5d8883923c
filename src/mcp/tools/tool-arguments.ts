import { invalidArgument } from '../../common/domain-error';
import { parseInput } from '../../common/validation';
import type { McpTool } from './tool';

/**
 * Validates a call's `arguments` against the tool's zod schema, after folding aliases
 * (`path` → `document_id`). Throws INVALID_ARGUMENT naming the field; an unknown argument
 * is named with the list of accepted ones, so a model can correct itself.
 */
export function parseToolArguments(tool: McpTool, args: unknown): Record<string, unknown> {
  const given = args ?? {};
  if (typeof given !== 'object' || Array.isArray(given)) {
    throw invalidArgument('arguments', 'must be a JSON object');
  }
  const values: Record<string, unknown> = { ...(given as Record<string, unknown>) };
  for (const [alias, field] of Object.entries(tool.aliases)) {
    if (values[alias] === undefined) continue;
    if (values[field] !== undefined && values[field] !== values[alias]) {
      throw invalidArgument(alias, `is another name for ${field}; give only one of them`);
    }
    values[field] = values[alias];
    delete values[alias];
  }
  const accepted = Object.keys(tool.input.shape);
  const unknown = Object.keys(values).find((key) => !accepted.includes(key));
  if (unknown !== undefined) {
    throw invalidArgument(
      unknown.slice(0, 100),
      `unknown argument; ${tool.name} accepts ${accepted.join(', ')}`,
    );
  }
  return parseInput(tool.input, values) as Record<string, unknown>;
}
