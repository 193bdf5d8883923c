import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { DocumentsService } from '../../documents/documents.service';
import { McpTool, type ToolContext } from './tool';
import { documentIdArgs } from './document-fields';
import { deleteResultSchema } from '../../documents/document.schemas';
import { writes } from './tool-annotations';

const input = z.strictObject(documentIdArgs);

const { document_id, revision, deleted_at } = deleteResultSchema.shape;

/** The REST delete answer's fields, saying `deleted` (and so never a null time). */
const output = z.object({
  document_id,
  deleted: z.literal(true),
  revision,
  deleted_at: deleted_at.unwrap(),
});

@Injectable()
export class DeleteDocumentTool extends McpTool<typeof input, typeof output> {
  readonly name = 'delete_document';
  readonly title = 'Delete a document';
  readonly description = [
    'Deletes a document: it disappears from list_documents, get_document, batch_read and, within a few seconds, from search_knowledge.',
    'The delete is soft: the content and its history are kept and an operator can restore it. Deleting a missing or already deleted document is NOT_FOUND.',
  ].join(' ');
  readonly input = input;
  readonly output = output;
  readonly aliases = { path: 'document_id' };
  readonly annotations = writes({ destructive: true, idempotent: true });

  constructor(private readonly documents: DocumentsService) {
    super();
  }

  async run(args: z.output<typeof input>, context: ToolContext) {
    const document = await this.documents.delete(
      args.document_id,
      undefined,
      context.actor,
      context.access,
    );
    return {
      document_id: document.document_id,
      deleted: true as const,
      revision: document.revision,
      deleted_at: document.deleted_at!,
    };
  }
}
