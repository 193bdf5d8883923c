import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import {
  LinksService,
  NEIGHBOURHOOD_DEFAULT_LIMIT,
  NEIGHBOURHOOD_MAX_DEPTH,
  NEIGHBOURHOOD_MAX_LIMIT,
} from '../../documents/links.service';
import { neighbourhoodSchema } from '../../documents/links.schemas';
import { resourceLink } from '../resources/document-resources';
import { McpTool, type ToolContext } from './tool';
import { documentIdArgs } from './document-fields';
import { READ_ONLY } from './tool-annotations';

const input = z.strictObject({
  ...documentIdArgs,
  depth: z
    .number()
    .int()
    .min(1)
    .max(NEIGHBOURHOOD_MAX_DEPTH)
    .optional()
    .describe(
      `How many links away to go, 1 to ${NEIGHBOURHOOD_MAX_DEPTH} (default 1: the documents it links to and those linking to it).`,
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(NEIGHBOURHOOD_MAX_LIMIT)
    .optional()
    .describe(
      `Documents to return at most, 1 to ${NEIGHBOURHOOD_MAX_LIMIT} (default ${NEIGHBOURHOOD_DEFAULT_LIMIT}); nearest first.`,
    ),
});

const output = neighbourhoodSchema;

/** The neighbourhood of a document (docs/mcp.md, "Following links"). */
@Injectable()
export class FollowLinksTool extends McpTool<typeof input, typeof output> {
  readonly name = 'follow_links';
  readonly title = 'Follow a document’s links';
  readonly description = [
    'Follows the links of a document both ways: the documents it links to (links_to) and the documents that link to it (linked_from), each with its title, the text of the link and the passage around it; with depth 2 or 3, their links too, nearest first.',
    'Use it after get_document to go from a runbook to the services it names, or from a service to the runbooks and decisions that mention it, in one call; then read the ones you need with batch_read.',
    `Links are markdown links, [[wikilinks]] and kb:// URIs, resolved to current documents (broken links are left out; get_document counts them). At most ${NEIGHBOURHOOD_MAX_LIMIT} documents (truncated: true when more were in reach).`,
  ].join(' ');
  readonly input = input;
  readonly output = output;
  readonly aliases = { path: 'document_id' };
  readonly annotations = READ_ONLY;

  constructor(private readonly graph: LinksService) {
    super();
  }

  override links(result: z.output<typeof output>) {
    return result.neighbours.map((neighbour) => resourceLink(neighbour, neighbour.passage));
  }

  run(args: z.output<typeof input>, context: ToolContext) {
    return this.graph.neighbourhood(
      args.document_id,
      { depth: args.depth, limit: args.limit },
      context.access,
    );
  }
}
