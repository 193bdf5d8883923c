import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { DocumentsService } from '../../documents/documents.service';
import { McpTool, type ToolContext } from './tool';
import { fieldsOf } from '../../common/schema-fields';
import { documentSchema } from '../../documents/document.schemas';
import { documentFields, documentIdArgs } from './document-fields';
import { READ_ONLY } from './tool-annotations';

const input = z.strictObject(documentIdArgs);

const { document_id, title, tags, metadata, updated_at } = documentFields;

/** Every field is the document's own, in this order. */
const output = z.object({
  document_id,
  revision: documentFields.revision.describe(
    'Pass it as expected_revision to update_document or patch_document.',
  ),
  title,
  tags,
  metadata,
  content_hash: documentSchema.shape.content_hash.describe('SHA-256 of the body.'),
  updated_at,
  body: documentSchema.shape.body.describe('The whole markdown body, never cut.'),
});
const answer = fieldsOf(output);

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
  readonly annotations = READ_ONLY;

  constructor(private readonly documents: DocumentsService) {
    super();
  }

  async run(args: z.output<typeof input>, context: ToolContext) {
    const document = await this.documents.get(args.document_id, context.access);
    return answer(document);
  }
}
