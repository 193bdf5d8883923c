import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import {
  SEARCH_DEFAULT_LIMIT,
  SEARCH_MAX_LIMIT,
  SEARCH_MAX_QUERY_CHARS,
  searchSchema,
  SearchService,
} from '../../vectors/search/search.service';
import { searchResponseSchema } from '../../vectors/search/search.schemas';
import { resourceLink } from '../resources/document-resources';
import { McpTool, type ToolContext } from './tool';
import { documentSchema } from '../../documents/document.schemas';
import { READ_ONLY } from './tool-annotations';

const input = z.strictObject({
  query: z
    .string()
    .min(1)
    .max(SEARCH_MAX_QUERY_CHARS)
    .describe('What to look for, in natural language or keywords.'),
  limit: searchSchema.shape.limit.describe(
    `Most hits to return, 1 to ${SEARCH_MAX_LIMIT} (default ${SEARCH_DEFAULT_LIMIT}).`,
  ),
  prefix: z
    .string()
    .optional()
    .describe('Only documents whose id starts with this folder prefix, e.g. "knowledge/reports/".'),
  path: z.string().optional().describe('Another name for prefix; give one of them.'),
  tags: documentSchema.shape.tags.optional().describe('Only documents carrying all of these tags.'),
  mode: searchSchema.shape.mode.describe(
    'hybrid (default): exact words and meaning together; lexical: exact words, identifiers and names only; vector: meaning only.',
  ),
});

/** The search answer (search.schemas.ts) with the number of hits. */
const output = searchResponseSchema.extend({ count: z.number().int() });

@Injectable()
export class SearchKnowledgeTool extends McpTool<typeof input, typeof output> {
  readonly name = 'search_knowledge';
  readonly title = 'Search the knowledge base';
  readonly description = [
    'Search over the text of every document, by exact words (identifiers, names, error codes) and by meaning together: returns the best-matching documents with a score, the heading path and the passage that matched, best first.',
    'Use it to answer a question or find documents by meaning; narrow with prefix (a folder such as "knowledge/reports/") or tags. Then read whole documents with get_document or batch_read.',
    `At most ${SEARCH_MAX_LIMIT} hits (default ${SEARCH_DEFAULT_LIMIT}). Documents written in the last few seconds may not be found yet: indexing follows writes within seconds.`,
  ].join(' ');
  readonly input = input;
  readonly output = output;
  readonly aliases = { path: 'prefix' };
  readonly annotations = READ_ONLY;

  constructor(private readonly search: SearchService) {
    super();
  }

  override links(result: z.output<typeof output>) {
    return result.results.map((hit) => resourceLink(hit));
  }

  async run(args: z.output<typeof input>, context: ToolContext) {
    const { results, mode, degraded, degraded_reason } = await this.search.search({
      query: args.query,
      limit: args.limit ?? SEARCH_DEFAULT_LIMIT,
      prefix: args.prefix,
      tags: args.tags,
      mode: args.mode,
      signal: context.signal,
      access: context.access,
    });
    return {
      results,
      count: results.length,
      mode,
      ...(degraded ? { degraded, degraded_reason } : {}),
    };
  }
}
