import { actorOf } from '../auth/api-key.service';
import { Injectable, Logger } from '@nestjs/common';
import {
  ErrorCode as RpcCode,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCNotification,
  type ProgressToken,
  type ResourceLink,
} from '@modelcontextprotocol/sdk/types.js';
import { DomainError, type ErrorCode } from '../common/domain-error';
import { faultOf, logFault } from '../common/fault';
import { restStatus } from '../common/rest-exception.filter';
import {
  fingerprintOf,
  IDEMPOTENCY_KEY_META,
  keyOwnerOf,
  parseIdempotencyKey,
} from '../idempotency/idempotency-key';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { AppConfig } from '../config/app-config';
import { PreSerialized } from '../transport/framing';
import { supportsResourceLinks } from '../transport/protocol-version';
import type { McpContext } from './mcp-context';
import { ProfileGuard } from './profile.guard';
import { isToolName } from './profiles';
import { RpcError } from './rpc-error';
import type { McpTool, ProgressReporter } from './tools/tool';
import { parseToolArguments } from './tools/tool-arguments';
import { toolErrorHint } from './tools/tool-errors';
import { ToolMetrics } from './tool.metrics';

/**
 * Runs one `tools/call`: profile check, argument validation, the tool, then the result.
 * Success: `structuredContent` plus the same JSON as one text item, then `resource_link`
 * items for the documents it names (2026-07-28 by default; MCP_TOOL_RESOURCE_LINKS). A `DomainError`:
 * `isError: true` with `{error: {code, message, hint, ...details}}` as text (no
 * `structuredContent`, which would have to match the output schema). Anything else is a
 * server fault: JSON-RPC -32603, details in the log only. A call cancelled by the client
 * is counted as `cancelled` and answers nothing anyone reads. Every call is logged and counted.
 */
@Injectable()
export class ToolCaller {
  private readonly logger = new Logger('McpToolCall');

  constructor(
    private readonly guard: ProfileGuard,
    private readonly metrics: ToolMetrics,
    private readonly config: AppConfig,
    private readonly keys: IdempotencyService,
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
      const run = () =>
        tool.run(input, {
          actor: actorOf(context.principal),
          profile: context.profile,
          access: context.access,
          signal: context.signal,
          progress: progressReporter(params._meta?.progressToken, context.notify),
        });
      const output = (await this.once(tool, params, context, run)) as Record<string, unknown>;
      outcome = 'ok';
      return success(output, this.linksWanted(context) ? tool.links(output) : []);
    } catch (error) {
      if (context.signal.aborted) {
        outcome = 'cancelled';
        throw error;
      }
      const fault = faultOf(error);
      if (fault !== undefined && !(error instanceof DomainError))
        logFault(this.logger, `tool ${tool.name}`, error);
      const failure = fault ?? (error instanceof DomainError ? error : undefined);
      if (failure !== undefined) {
        outcome = failure.code.toLowerCase();
        const body = { error: { ...failure.toJSON(), hint: toolErrorHint(failure.code) } };
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

  /**
   * Runs a write tool called with an idempotency key in `_meta` (this server's extension,
   * docs/mcp.md) once per caller and key, as a REST write with `Idempotency-Key` runs: a
   * repeated call gets the first call's output, or its error again. A read-only tool ignores
   * the key; a key that is not 1 to 255 printable ASCII characters is INVALID_ARGUMENT.
   */
  private async once(
    tool: McpTool,
    params: CallToolRequest['params'],
    context: McpContext,
    run: () => Promise<unknown>,
  ): Promise<unknown> {
    const field = `_meta["${IDEMPOTENCY_KEY_META}"]`;
    const key = parseIdempotencyKey(params._meta?.[IDEMPOTENCY_KEY_META], field);
    if (key === undefined || tool.annotations.readOnlyHint === true) return run();
    const { answer } = await this.keys.once(
      {
        owner: keyOwnerOf(context.principal),
        key,
        fingerprint: fingerprintOf(['tools/call', tool.name, params.arguments ?? {}]),
      },
      async () => ({ status: 200, body: await run() }),
      (error) => ({ status: restStatus(error.code), body: { error: error.toJSON() } }),
    );
    if (answer.status < 400) return answer.body;
    // A refusal stored by the first call: the same error again.
    const { code, message, ...details } = (answer.body as { error: StoredError }).error;
    throw new DomainError(code, message, details);
  }

  /**
   * Whether this request's results get `resource_link` items. Off for 2025-era requests by
   * default: LangChain's MCP adapter (1.1) turns them into file blocks that its OpenAI and
   * Anthropic converters reject, which breaks every agent turn after a listing.
   */
  private linksWanted(context: McpContext): boolean {
    switch (this.config.mcpToolResourceLinks) {
      case 'always':
        return supportsResourceLinks(context.protocolVersion);
      case 'modern':
        return context.era === 'modern';
      case 'never':
        return false;
      default: {
        const unknown: never = this.config.mcpToolResourceLinks;
        throw new Error(`unknown MCP_TOOL_RESOURCE_LINKS ${String(unknown)}`);
      }
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
      subject: context.principal.subject,
      client_id: context.principal.clientId,
      profile: context.profile,
      tool: tool.slice(0, 100),
      document_id: documentId?.slice(0, 512),
      outcome,
      ms: Math.round(ms * 100) / 100,
    });
  }
}

/** A DomainError as stored with its key: `toJSON()`'s fields. */
type StoredError = { code: ErrorCode; message: string } & Record<string, unknown>;

/**
 * `{content: [{type: "text", text: <json>}, ...links], structuredContent: <json>}`,
 * serialising the output once for both places instead of once per place plus once more for
 * the envelope.
 */
function success(output: Record<string, unknown>, links: readonly ResourceLink[]): PreSerialized {
  const json = JSON.stringify(output);
  const more = links.map((link) => `,${JSON.stringify(link)}`).join('');
  return new PreSerialized(
    `{"content":[{"type":"text","text":${JSON.stringify(json)}}${more}],"structuredContent":${json}}`,
  );
}

/**
 * `notifications/progress` for the call's progress token, when the client gave one and the
 * answer is a stream that can carry them. Reports that do not advance are dropped: the
 * protocol requires progress to grow with every notification.
 */
function progressReporter(
  token: ProgressToken | undefined,
  notify: ((notification: JSONRPCNotification) => void) | undefined,
): ProgressReporter | undefined {
  if (token === undefined || notify === undefined) return undefined;
  let last = -Infinity;
  return (progress, total, message) => {
    if (!(progress > last)) return;
    last = progress;
    notify({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: {
        progressToken: token,
        progress,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message }),
      },
    });
  };
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
