import { Module } from '@nestjs/common';
import { DocumentsModule } from '../documents/documents.module';
import { TransportModule } from '../transport/transport.module';
import { VectorsModule } from '../vectors/vectors.module';
import { McpAuthGuard } from './mcp-auth.guard';
import { McpController } from './mcp.controller';
import { McpDispatcher } from './mcp.dispatcher';
import { ProfileGuard } from './profile.guard';
import { ToolCaller } from './tool-caller';
import { ToolMetrics } from './tool.metrics';
import { BatchReadTool } from './tools/batch-read.tool';
import { DeleteDocumentTool } from './tools/delete-document.tool';
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
  UploadDocumentTool,
  UpdateDocumentTool,
  PatchDocumentTool,
  DeleteDocumentTool,
  IngestDocumentTool,
];

/**
 * MCP over Streamable HTTP (SPEC §5–§7): the endpoint controller, API-key and profile
 * guards, the JSON-RPC dispatcher and the ten tools, one class per file.
 */
@Module({
  imports: [DocumentsModule, VectorsModule, TransportModule],
  controllers: [McpController],
  providers: [
    ...TOOLS,
    { provide: MCP_TOOLS, useFactory: (...tools: unknown[]) => tools, inject: TOOLS },
    ToolRegistry,
    ProfileGuard,
    ToolCaller,
    ToolMetrics,
    McpDispatcher,
    McpAuthGuard,
  ],
})
export class McpModule {}
