import { Module } from '@nestjs/common';
import { DocumentsModule } from '../documents/documents.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { TransportModule } from '../transport/transport.module';
import { VectorsModule } from '../vectors/vectors.module';
import { ArgumentCompleter } from './completion/argument-completer';
import { McpAuthGuard } from './mcp-auth.guard';
import { McpController } from './mcp.controller';
import { AppViews } from './apps/app-views';
import { McpDispatcher } from './mcp.dispatcher';
import { ProfileGuard } from './profile.guard';
import { AnswerQuestionPrompt } from './prompts/answer-question.prompt';
import { MCP_PROMPTS, PromptRegistry } from './prompts/prompt-registry';
import { ReviewDocumentPrompt } from './prompts/review-document.prompt';
import { SummarizeFolderPrompt } from './prompts/summarize-folder.prompt';
import { DocumentResources } from './resources/document-resources';
import { ChangeSubscriptions } from './subscriptions/change-subscriptions';
import { ToolCaller } from './tool-caller';
import { ToolMetrics } from './tool.metrics';
import { BatchReadTool } from './tools/batch-read.tool';
import { DeleteDocumentTool } from './tools/delete-document.tool';
import { FollowLinksTool } from './tools/follow-links.tool';
import { GetDocumentForRewriteTool } from './tools/get-document-for-rewrite.tool';
import { GetDocumentTool } from './tools/get-document.tool';
import { IngestDocumentTool } from './tools/ingest-document.tool';
import { ListDocumentsTool } from './tools/list-documents.tool';
import { PatchDocumentTool } from './tools/patch-document.tool';
import { SearchKnowledgeTool } from './tools/search-knowledge.tool';
import { MCP_TOOLS, ToolRegistry } from './tools/tool-registry';
import { UpdateDocumentTool } from './tools/update-document.tool';
import { UploadDocumentTool } from './tools/upload-document.tool';

const TOOLS = [
  SearchKnowledgeTool,
  ListDocumentsTool,
  GetDocumentTool,
  GetDocumentForRewriteTool,
  BatchReadTool,
  FollowLinksTool,
  UploadDocumentTool,
  UpdateDocumentTool,
  PatchDocumentTool,
  DeleteDocumentTool,
  IngestDocumentTool,
];

const PROMPTS = [AnswerQuestionPrompt, SummarizeFolderPrompt, ReviewDocumentPrompt];

/**
 * MCP over Streamable HTTP (docs/mcp.md), in the 2025 and 2026 eras: the endpoint
 * controller, API-key and profile guards, the JSON-RPC dispatcher, the eleven tools and the
 * three prompts (one class per file), documents as resources, completions, and the MCP Apps
 * views offered to hosts that declare the extension.
 */
@Module({
  imports: [DocumentsModule, VectorsModule, TransportModule, IdempotencyModule],
  controllers: [McpController],
  providers: [
    ...TOOLS,
    { provide: MCP_TOOLS, useFactory: (...tools: unknown[]) => tools, inject: TOOLS },
    ToolRegistry,
    ...PROMPTS,
    { provide: MCP_PROMPTS, useFactory: (...prompts: unknown[]) => prompts, inject: PROMPTS },
    PromptRegistry,
    DocumentResources,
    AppViews,
    ArgumentCompleter,
    ProfileGuard,
    ToolCaller,
    ToolMetrics,
    McpDispatcher,
    McpAuthGuard,
    ChangeSubscriptions,
  ],
})
export class McpModule {}
