import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { DocumentsService } from '../../documents/documents.service';
import { McpTool } from './tool';
import { cut, documentIdArg, pathAliasArg, timestamp, vectorStatus } from './document-fields';

/** Longest body `get_document` returns, in characters; get_document_for_rewrite has no cut. */
export const GET_DOCUMENT_MAX_CHARS = 20_000;

const input = z.strictObject({ document_id: documentIdArg, path: pathAliasArg });

const output = z.object({
  document_id: z.string(),
  parent_id: z.string().nullable(),
  title: z.string(),
  tags: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
  revision: z.number().int(),
  vector_status: vectorStatus,
  created_at: timestamp,
  updated_at: timestamp,
  body: z.string().describe(`The markdown text, cut after ${GET_DOCUMENT_MAX_CHARS} characters.`),
  body_chars: z.number().int().describe('Length of the whole body in characters.'),
  truncated: z.boolean().describe('The body was cut; get_document_for_rewrite returns all of it.'),
});

@Injectable()
export class GetDocumentTool extends McpTool<typeof input, typeof output> {
  readonly name = 'get_document';
  readonly title = 'Read a document';
  readonly description = [
    'Reads one document by id: title, tags, metadata, revision and its markdown body.',
    `Bodies longer than ${GET_DOCUMENT_MAX_CHARS} characters are cut and marked truncated: true; use get_document_for_rewrite for the full text, or batch_read to read several documents at once.`,
    'Reflects every committed write immediately. A missing or deleted document is NOT_FOUND.',
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
    const body = cut(document.body, GET_DOCUMENT_MAX_CHARS);
    return {
      document_id: document.document_id,
      parent_id: document.parent_id,
      title: document.title,
      tags: document.tags,
      metadata: document.metadata,
      revision: document.revision,
      vector_status: document.vector_status,
      created_at: document.created_at,
      updated_at: document.updated_at,
      body: body.text,
      body_chars: document.body.length,
      truncated: body.truncated,
    };
  }
}
