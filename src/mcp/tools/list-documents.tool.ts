import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { DocumentListingsService, LIST_MAX_LIMIT } from '../../documents/document-listings.service';
import { resourceLink } from '../resources/document-resources';
import { McpTool, type ToolContext } from './tool';
import { listResultSchema } from '../../documents/document.schemas';
import { READ_ONLY } from './tool-annotations';

const input = z.strictObject({
  prefix: z
    .string()
    .optional()
    .describe(
      'Only documents whose id starts with this text, e.g. "knowledge/reports/" for a folder. Plain text: % and _ are not wildcards. Omit to list from the start.',
    ),
  path: z.string().optional().describe('Another name for prefix; give one of them.'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(LIST_MAX_LIMIT)
    .optional()
    .describe(`Documents per page, 1 to ${LIST_MAX_LIMIT} (default 50).`),
  offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('How many matching documents to skip: pass next_offset of the previous page.'),
});

const output = listResultSchema;

@Injectable()
export class ListDocumentsTool extends McpTool<typeof input, typeof output> {
  readonly name = 'list_documents';
  readonly title = 'List documents';
  readonly description = [
    'Lists documents whose id starts with a prefix (a folder such as "knowledge/reports/"), in byte order of id, one page at a time: id, title, tags, revision and last update, without bodies.',
    'Use it to browse what exists or to find an exact id; use search_knowledge to find documents by meaning, get_document or batch_read to read them.',
    `Pages hold up to ${LIST_MAX_LIMIT} documents (default 50); when truncated is true, call again with offset = next_offset. Deleted documents are not listed.`,
  ].join(' ');
  readonly input = input;
  readonly output = output;
  readonly aliases = { path: 'prefix' };
  readonly annotations = READ_ONLY;

  constructor(private readonly listings: DocumentListingsService) {
    super();
  }

  override links(result: z.output<typeof output>) {
    return result.items.map((item) => resourceLink(item));
  }

  run(args: z.output<typeof input>, context: ToolContext) {
    return this.listings.list(
      { prefix: args.prefix, limit: args.limit, offset: args.offset },
      context.access,
    );
  }
}
