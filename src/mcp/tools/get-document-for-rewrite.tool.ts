import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { DocumentsService } from '../../documents/documents.service';
import { McpTool } from './tool';
import { documentIdArg, pathAliasArg, timestamp } from './document-fields';

const input = z.strictObject({ document_id: documentIdArg, path: pathAliasArg });

const output = z.object({
  document_id: z.string(),
  revision: z
    .number()
    .int()
    .describe('Pass it as expected_revision to update_document or patch_document.'),
  title: z.string(),
  tags: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
  content_hash: z.string().describe('SHA-256 of the body.'),
  updated_at: timestamp,
  body: z.string().describe('The whole markdown body, never cut.'),
});

@Injectable()
export class GetDocumentForRewriteTool extends McpTool<typeof input, typeof output> {
  readonly name = 'get_document_for_rewrite';
  readonly title = 'Read a document for editing';
  readonly description = [
    'Reads the complete, uncut body of one document together with its current revision, before editing it.',
    'Copy old_str for patch_document from this text exactly, and pass revision as expected_revision to patch_document or update_document so that a concurrent change is detected instead of overwritten.',
    'For plain reading prefer get_document (bodies cut at a safe length).',
  ].join(' ');
  readonly input = input;
  readonly output = output;
  readonly aliases = { path: 'document_id' };
  readonly annotations = {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  };

  constructor(private readonly documents: DocumentsService) {
    super();
  }

  async run(args: z.output<typeof input>) {
    const document = await this.documents.get(args.document_id);
    return {
      document_id: document.document_id,
      revision: document.revision,
      title: document.title,
      tags: document.tags,
      metadata: document.metadata,
      content_hash: document.content_hash,
      updated_at: document.updated_at,
      body: document.body,
    };
  }
}
