import { Inject, Injectable } from '@nestjs/common';
import type { ListToolsResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { PreSerialized } from '../../transport/framing';
import { PROFILE_TOOLS, TOOL_NAMES, type ToolName } from '../profiles';
import { type McpProfile } from '../../auth/mcp-routes';
import { viewMetaOf } from '../apps/app-views';
import { portableJsonSchema } from './portable-json-schema';
import type { McpTool } from './tool';

/** Injection token of the array of every tool instance (built in McpModule). */
export const MCP_TOOLS = Symbol('MCP_TOOLS');

/**
 * The tools and their `tools/list` entries. JSON Schemas are generated from the zod
 * schemas once, here, at start-up; each profile's `tools/list` result is serialised once
 * too, so answering it costs a lookup. Start-up fails if a tool of {@link TOOL_NAMES} is missing,
 * doubled or unknown.
 */
@Injectable()
export class ToolRegistry {
  private readonly tools = new Map<string, McpTool>();
  private readonly listResults: Readonly<Record<McpProfile, PreSerialized>>;
  /** The same lists for MCP Apps hosts: the tools a view shows name it in `_meta.ui`. */
  private readonly appsListResults: Readonly<Record<McpProfile, PreSerialized>>;

  constructor(@Inject(MCP_TOOLS) tools: readonly McpTool[]) {
    for (const tool of tools) {
      if (this.tools.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
      checkAliases(tool);
      this.tools.set(tool.name, tool);
    }
    const missing = TOOL_NAMES.filter((name) => !this.tools.has(name));
    if (missing.length > 0 || this.tools.size !== TOOL_NAMES.length) {
      throw new Error(`tool registry mismatch: missing ${missing.join(', ') || 'none'}`);
    }
    const listed = new Map(TOOL_NAMES.map((name) => [name, listing(this.tools.get(name)!)]));
    this.listResults = listsOf((name) => listed.get(name)!);
    this.appsListResults = listsOf((name) => {
      const meta = viewMetaOf(name);
      return meta === undefined ? listed.get(name)! : { ...listed.get(name)!, _meta: meta };
    });
  }

  /** The tool called `name`, whatever the profile; `undefined` for an unknown name. */
  find(name: string): McpTool | undefined {
    return this.tools.get(name);
  }

  /**
   * The profile's whole `tools/list` result, serialised once; for an MCP Apps host
   * (`apps`), the same tools with the views that show their results.
   */
  listResult(profile: McpProfile, apps = false): PreSerialized {
    return (apps ? this.appsListResults : this.listResults)[profile];
  }

  allows(profile: McpProfile, name: ToolName): boolean {
    return PROFILE_TOOLS[profile].includes(name);
  }
}

function listsOf(entry: (name: ToolName) => Tool): Record<McpProfile, PreSerialized> {
  return Object.fromEntries(
    Object.entries(PROFILE_TOOLS).map(([profile, names]) => [
      profile,
      PreSerialized.of({ tools: names.map(entry) } satisfies ListToolsResult),
    ]),
  ) as Record<McpProfile, PreSerialized>;
}

function listing(tool: McpTool): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchema(tool.input, 'input') as Tool['inputSchema'],
    outputSchema: jsonSchema(tool.output, 'output') as Tool['outputSchema'],
    annotations: { title: tool.title, ...tool.annotations },
  };
}

/**
 * JSON Schema (2020-12, MCP's default dialect) of a zod object, in its portable spelling
 * (see {@link portableJsonSchema}). `$schema` is left out: MCP assumes 2020-12 without it,
 * and some clients reject the keyword.
 */
function jsonSchema(schema: z.ZodObject, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'throw' });
  return portableJsonSchema(rest);
}

function checkAliases(tool: McpTool): void {
  const shape = tool.input.shape as Record<string, unknown>;
  for (const [alias, field] of Object.entries(tool.aliases)) {
    if (!(alias in shape) || !(field in shape)) {
      throw new Error(`tool ${tool.name}: alias ${alias} → ${field} must name two input fields`);
    }
  }
}
