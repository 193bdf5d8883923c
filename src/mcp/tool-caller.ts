import { Injectable, Logger } from '@nestjs/common';
import {
  ErrorCode as RpcCode,
  type CallToolRequest,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { DomainError } from '../common/domain-error';
import { PreSerialized } from '../transport/framing';
import type { McpContext } from './mcp-context';
import { ProfileGuard } from './profile.guard';
import { isToolName } from './profiles';
import { RpcError } from './rpc-error';
import type { McpTool } from './tools/tool';
import { parseToolArguments } from './tools/tool-arguments';
import { toolErrorHint } from './tools/tool-errors';
import { ToolMetrics } from './tool.metrics';

/**
 * Runs one `tools/call`: profile check, argument validation, the tool, then the result.
 * Success: `structuredContent` plus the same JSON as one text item. A `DomainError`:
 * `isError: true` with `{error: {code, message, hint, ...details}}` as text (no
 * `structuredContent`, which would have to match the output schema). Anything else is a
 * server fault: JSON-RPC -32603, details in the log only. Every call is logged and counted.
 */
@Injectable()
export class ToolCaller {
  private readonly logger = new Logger('McpToolCall');

  constructor(
    private readonly guard: ProfileGuard,
    private readonly metrics: ToolMetrics,
  ) {}

  async call(
    params: CallToolRequest['params'],
    context: McpContext,
  ): Promise<CallToolResult | PreSerialized> {
    let tool: McpTool;
    try {
      tool = this.guard.authorize(context.profile, params.name);
    } catch (error) {
      const outcome = refusal(error);
      if (outcome === 'not_allowed' && isToolName(params.name)) {
        this.metrics.record(context.profile, params.name, outcome);
      }
      this.log(context, params.name, rawDocumentId(params.arguments), outcome, 0);
      throw error;
    }
    const started = performance.now();
    let outcome = 'internal_error';
    let documentId = rawDocumentId(params.arguments);
    try {
      const input = parseToolArguments(tool, params.arguments);
      documentId = tool.documentIdOf(input) ?? documentId;
      const output = (await tool.run(input, {
        actor: context.principal.name,
        profile: context.profile,
      })) as Record<string, unknown>;
      outcome = 'ok';
      return success(output);
    } catch (error) {
      if (error instanceof DomainError) {
        outcome = error.code.toLowerCase();
        const body = { error: { ...error.toJSON(), hint: toolErrorHint(error.code) } };
        return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
      }
      this.logger.error(
        `tool ${tool.name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      throw new RpcError(RpcCode.InternalError, `Internal error while running ${tool.name}`);
    } finally {
      const ms = performance.now() - started;
      this.metrics.record(context.profile, tool.name, outcome, ms / 1000);
      this.log(context, tool.name, documentId, outcome, ms);
    }
  }

  private log(
    context: McpContext,
    tool: string,
    documentId: string | undefined,
    outcome: string,
    ms: number,
  ): void {
    this.logger.log({
      msg: 'tool call',
      key: context.principal.name,
      profile: context.profile,
      tool: tool.slice(0, 100),
      document_id: documentId?.slice(0, 512),
      outcome,
      ms: Math.round(ms * 100) / 100,
    });
  }
}

/**
 * `{content: [{type: "text", text: <json>}], structuredContent: <json>}`, serialising the
 * output once for both places instead of once per place plus once more for the envelope.
 */
function success(output: Record<string, unknown>): PreSerialized {
  const json = JSON.stringify(output);
  return new PreSerialized(
    `{"content":[{"type":"text","text":${JSON.stringify(json)}}],"structuredContent":${json}}`,
  );
}

function rawDocumentId(args: Record<string, unknown> | undefined): string | undefined {
  const id = args?.document_id ?? args?.path ?? args?.prefix;
  return typeof id === 'string' ? id : undefined;
}

function refusal(error: unknown): string {
  return error instanceof RpcError && error.code === RpcCode.MethodNotFound
    ? 'not_allowed'
    : 'unknown_tool';
}
