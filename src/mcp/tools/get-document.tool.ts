import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { DocumentsService } from '../../documents/documents.service';
import { LinksService } from '../../documents/links.service';
import { linkSummarySchema } from '../../documents/links.schemas';
import { McpTool, type ToolContext } from './tool';
import { cut, documentFields, documentIdArgs, documentView } from './document-fields';
import { documentSchema } from '../../documents/document.schemas';
import { READ_ONLY } from './tool-annotations';

/** Longest body `get_document` returns, in characters; get_document_for_rewrite has no cut. */
export const GET_DOCUMENT_MAX_CHARS = 20_000;

const input = z.strictObject(documentIdArgs);

const output = z.object({
  ...documentFields,
  body: documentSchema.shape.body.describe(
    `The markdown text, cut after ${GET_DOCUMENT_MAX_CHARS} characters.`,
  ),
  body_chars: z.number().int().describe('Length of the whole body in characters.'),
  truncated: z.boolean().describe('The body was cut; get_document_for_rewrite returns all of it.'),
  links: linkSummarySchema.describe(
    'Its links and backlinks: counts, and the first few; follow_links gives them all with their passages.',
  ),
});

@Injectable()
export class GetDocumentTool extends McpTool<typeof input, typeof output> {
  readonly name = 'get_document';
  readonly title = 'Read a document';
  readonly description = [
    'Reads one document by id: title, tags, metadata, revision and its markdown body.',
    `Bodies longer than ${GET_DOCUMENT_MAX_CHARS} characters are cut and marked truncated: true; use get_document_for_rewrite for the full text, or batch_read to read several documents at once.`,
    'Also says how many links the document has (and how many are broken) and how many documents link to it, with the first few of each; follow_links walks them.',
    'Reflects every committed write immediately. A missing or deleted document is NOT_FOUND.',
  ].join(' ');
  readonly input = input;
  readonly output = output;
  readonly aliases = { path: 'document_id' };
  readonly annotations = READ_ONLY;

  constructor(
    private readonly documents: DocumentsService,
    private readonly graph: LinksService,
  ) {
    super();
  }

  async run(args: z.output<typeof input>, context: ToolContext) {
    const document = await this.documents.get(args.document_id, context.access);
    const body = cut(document.body, GET_DOCUMENT_MAX_CHARS);
    return {
      ...documentView(document),
      body: body.text,
      body_chars: document.body.length,
      truncated: body.truncated,
      links: await this.graph.summary(document, context.access),
    };
  }
}
