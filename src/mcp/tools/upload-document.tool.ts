import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { DocumentsService } from '../../documents/documents.service';
import { McpTool, type ToolContext } from './tool';
import {
  documentIdArg,
  metadataArg,
  pathAliasArg,
  tagsArg,
  timestamp,
  vectorStatus,
} from './document-fields';

const input = z.strictObject({
  document_id: documentIdArg,
  path: pathAliasArg,
  content: z.string().describe('The markdown body (at most 1 MiB).'),
  body: z.string().optional().describe('Another name for content; give one of them.'),
  title: z
    .string()
    .optional()
    .describe(
      'Title (at most 300 characters); by default the first markdown heading, else the last id segment.',
    ),
  tags: tagsArg.optional(),
  metadata: metadataArg.optional(),
});

const output = z.object({
  document_id: z.string(),
  revision: z.number().int().describe('1 for a new document; continues after a deleted one.'),
  title: z.string(),
  vector_status: vectorStatus,
  created_at: timestamp,
  updated_at: timestamp,
});

@Injectable()
export class UploadDocumentTool extends McpTool<typeof input, typeof output> {
  readonly name = 'upload_document';
  readonly title = 'Create a document';
  readonly description = [
    'Creates a new document at document_id with markdown content, and optional title, tags and metadata.',
    'Fails with ALREADY_EXISTS if a document already lives at that id (use update_document or patch_document to change it); an id whose document was deleted is reused and its revision continues.',
    'The document is stored when this returns and get_document sees it at once; semantic search (search_knowledge) indexes it within a few seconds.',
  ].join(' ');
  readonly input = input;
  readonly output = output;
  readonly aliases = { path: 'document_id', body: 'content' };
  readonly annotations = {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  };

  constructor(private readonly documents: DocumentsService) {
    super();
  }

  async run(args: z.output<typeof input>, context: ToolContext) {
    const document = await this.documents.create(
      {
        document_id: args.document_id,
        body: args.content,
        title: args.title,
        tags: args.tags,
        metadata: args.metadata,
      },
      context.actor,
    );
    return {
      document_id: document.document_id,
      revision: document.revision,
      title: document.title,
      vector_status: document.vector_status,
      created_at: document.created_at,
      updated_at: document.updated_at,
    };
  }
}
