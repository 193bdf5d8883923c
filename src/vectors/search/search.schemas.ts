import { z } from 'zod';

/**
 * The shapes of a search answer, described once: `GET /search` answers a
 * {@link searchResponseSchema}, the `search_knowledge` tool the same with a `count`, and
 * the OpenAPI document publishes it.
 */

/** Which rankings a search uses (docs/search.md). */
export const SEARCH_MODES = ['hybrid', 'vector', 'lexical'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** One document found: its best passage. */
export const searchHitSchema = z.object({
  document_id: z.string(),
  title: z.string(),
  score: z
    .number()
    .describe('Relevance: higher is closer to the query (comparable within one answer only).'),
  heading_path: z
    .string()
    .describe('Headings above the passage, e.g. "Guide › Install"; empty when none.'),
  snippet: z
    .string()
    .describe('The passage that matched best, query words in **bold** where found.'),
  source_uri: z
    .string()
    .optional()
    .describe(
      'Where a document kept in sync by a source came from (a page, a file, repository@commit:path): the original to cite.',
    ),
});
export type SearchResult = z.output<typeof searchHitSchema>;

export const searchResponseSchema = z.object({
  results: z.array(searchHitSchema).describe('Best hits first; deleted documents never appear.'),
  mode: z.enum(SEARCH_MODES),
  degraded: z
    .literal(true)
    .optional()
    .describe(
      'Present when hybrid answered from the lexical side alone (the vector side failed), or some results are not embedded yet; degraded_reason says which.',
    ),
  degraded_reason: z.string().optional(),
});
export type SearchResponse = z.output<typeof searchResponseSchema>;
