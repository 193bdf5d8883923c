import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { DocumentsService } from '../../documents/documents.service';
import { McpTool, type ToolContext } from './tool';
import { AppConfig } from '../../config/app-config';
import { fieldsOf } from '../../common/schema-fields';
import { bodyAliasArg, documentFields, documentIdArgs, limitedArgs } from './document-fields';
import { writes } from './tool-annotations';

const inputFor = (config: AppConfig) => {
  const limited = limitedArgs(config.limits);
  return z.strictObject({
    ...documentIdArgs,
    content: limited.content,
    body: bodyAliasArg,
    title: limited.title.optional(),
    tags: limited.tags.optional(),
    metadata: limited.metadata.optional(),
  });
};
type Input = ReturnType<typeof inputFor>;

const { document_id, title, vector_status, created_at, updated_at } = documentFields;

/** Every field is the document's own, in this order. */
const output = z.object({
  document_id,
  revision: documentFields.revision.describe(
    '1 for a new document; continues after a deleted one.',
  ),
  title,
  vector_status,
  created_at,
  updated_at,
});
const answer = fieldsOf(output);

@Injectable()
export class UploadDocumentTool extends McpTool<Input, typeof output> {
  readonly name = 'upload_document';
  readonly title = 'Create a document';
  readonly description = [
    'Creates a new document at document_id with markdown content, and optional title, tags and metadata.',
    'Fails with ALREADY_EXISTS if a document already lives at that id (use update_document or patch_document to change it); an id whose document was deleted is reused and its revision continues.',
    'The document is stored when this returns and get_document sees it at once; semantic search (search_knowledge) indexes it within a few seconds.',
  ].join(' ');
  readonly input: Input;
  readonly output = output;
  readonly aliases = { path: 'document_id', body: 'content' };
  readonly annotations = writes({ destructive: false, idempotent: false });

  constructor(
    private readonly documents: DocumentsService,
    config: AppConfig,
  ) {
    super();
    this.input = inputFor(config);
  }

  async run(args: z.output<Input>, context: ToolContext) {
    const document = await this.documents.create(
      {
        document_id: args.document_id,
        body: args.content,
        title: args.title,
        tags: args.tags,
        metadata: args.metadata,
      },
      context.actor,
      context.access,
    );
    return answer(document);
  }
}
