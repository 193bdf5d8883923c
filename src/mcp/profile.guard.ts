import { Injectable } from '@nestjs/common';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { PreSerialized } from '../transport/framing';
import { type McpProfile } from '../auth/mcp-routes';
import { RpcError } from './rpc-error';
import type { McpTool } from './tools/tool';
import { ToolRegistry } from './tools/tool-registry';

/**
 * The profile's say over `tools/list` and `tools/call` (docs/mcp.md). It acts per JSON-RPC
 * message, not per HTTP request (one batch may hold allowed and refused calls), so it is
 * called by the dispatcher rather than being a Nest `CanActivate`.
 */
@Injectable()
export class ProfileGuard {
  constructor(private readonly registry: ToolRegistry) {}

  /**
   * The `tools/list` result of the profile: exactly its tools, serialised once at start-up
   * (with their views for an MCP Apps host).
   */
  toolsListResult(profile: McpProfile, apps = false): PreSerialized {
    return this.registry.listResult(profile, apps);
  }

  /**
   * The tool `name` if `profile` may call it. An unknown name (`move_document` included)
   * is -32602, like the SDK's "tool not found"; a real tool outside the profile is -32601.
   */
  authorize(profile: McpProfile, name: string): McpTool {
    const tool = this.registry.find(name);
    if (!tool) {
      throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 100)}`, {
        tool: name.slice(0, 100),
      });
    }
    if (!this.registry.allows(profile, tool.name)) {
      throw new RpcError(ErrorCode.MethodNotFound, 'Tool not allowed on this endpoint', {
        tool: tool.name,
        profile,
      });
    }
    return tool;
  }
}
