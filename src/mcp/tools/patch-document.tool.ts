import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { DocumentsService } from '../../documents/documents.service';
import { McpTool, type ToolContext } from './tool';
import { documentIdArgs, expectedRevisionArg, writeResult } from './document-fields';
import { patchInputSchema, patchResultSchema } from '../../documents/document.schemas';
import { writes } from './tool-annotations';

const { old_str, new_str, replace_all } = patchInputSchema.shape;

const input = z.strictObject({
  ...documentIdArgs,
  old_str: old_str
    .min(1)
    .describe(
      'Exact text to replace, copied from the current body (whitespace and line breaks included).',
    ),
  new_str: new_str.describe('Replacement text; an empty string deletes old_str.'),
  replace_all: replace_all.describe(
    'Replace every occurrence instead of requiring exactly one (default false).',
  ),
  expected_revision: expectedRevisionArg,
});

const output = writeResult.extend({ replacements: patchResultSchema.shape.replacements });

@Injectable()
export class PatchDocumentTool extends McpTool<typeof input, typeof output> {
  readonly name = 'patch_document';
  readonly title = 'Edit part of a document';
  readonly description = [
    'Replaces old_str by new_str in a document body: the preferred way to make a targeted edit without resending the whole text.',
    'old_str must occur exactly once: PATCH_NO_MATCH when it is not found (read the body again with get_document_for_rewrite and copy the text exactly), PATCH_AMBIGUOUS with the count when it occurs several times (add surrounding text, or pass replace_all: true).',
    'The write is conditional on the revision read, so a concurrent change is never overwritten; pass expected_revision to require a specific one. Stored when this returns; semantic search catches up within a few seconds.',
  ].join(' ');
  readonly input = input;
  readonly output = output;
  readonly aliases = { path: 'document_id' };
  readonly annotations = writes({ destructive: true, idempotent: false });

  constructor(private readonly documents: DocumentsService) {
    super();
  }

  async run(args: z.output<typeof input>, context: ToolContext) {
    const { document, changed, replacements } = await this.documents.patch(
      args.document_id,
      {
        old_str: args.old_str,
        new_str: args.new_str,
        replace_all: args.replace_all,
        expected_revision: args.expected_revision,
      },
      context.actor,
      context.access,
    );
    return {
      document_id: document.document_id,
      revision: document.revision,
      changed,
      replacements,
      title: document.title,
      vector_status: document.vector_status,
      updated_at: document.updated_at,
    };
  }
}
