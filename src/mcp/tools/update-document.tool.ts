import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { DocumentsService } from '../../documents/documents.service';
import { McpTool, type ToolContext } from './tool';
import { bodyAliasArg, documentIdArgs, expectedRevisionArg, writeResult } from './document-fields';
import { documentSchema } from '../../documents/document.schemas';
import { writes } from './tool-annotations';

const input = z.strictObject({
  ...documentIdArgs,
  content: z.string().optional().describe('The new markdown body, replacing the old one whole.'),
  body: bodyAliasArg,
  title: z.string().optional().describe('New title.'),
  tags: documentSchema.shape.tags.optional().describe('New tags, replacing the old ones.'),
  metadata: documentSchema.shape.metadata
    .optional()
    .describe('New metadata object, replacing the old one.'),
  expected_revision: expectedRevisionArg,
});

@Injectable()
export class UpdateDocumentTool extends McpTool<typeof input, typeof writeResult> {
  readonly name = 'update_document';
  readonly title = 'Replace a document';
  readonly description = [
    'Replaces the content, title, tags and/or metadata of an existing document (give at least one; omitted ones are kept). The revision goes up by one; an update that changes nothing keeps it (changed: false).',
    'For a small edit prefer patch_document. Pass expected_revision (from get_document_for_rewrite) so a concurrent change fails with REVISION_CONFLICT instead of being overwritten. Earlier versions are kept in the history.',
    'The change is stored when this returns; semantic search catches up within a few seconds.',
  ].join(' ');
  readonly input = input;
  readonly output = writeResult;
  readonly aliases = { path: 'document_id', body: 'content' };
  readonly annotations = writes({ destructive: true, idempotent: true });

  constructor(private readonly documents: DocumentsService) {
    super();
  }

  async run(args: z.output<typeof input>, context: ToolContext) {
    const { document, changed } = await this.documents.update(
      args.document_id,
      {
        body: args.content,
        title: args.title,
        tags: args.tags,
        metadata: args.metadata,
        expected_revision: args.expected_revision,
      },
      context.actor,
      context.access,
    );
    return {
      document_id: document.document_id,
      revision: document.revision,
      changed,
      title: document.title,
      vector_status: document.vector_status,
      updated_at: document.updated_at,
    };
  }
}
