import { z } from 'zod';

/**
 * The shapes of links between documents as the API answers them, each described once: the
 * REST routes (src/documents/links.controller.ts), the MCP tools' output schemas and the
 * OpenAPI components are derived from these. docs/documents.md, "Links between documents".
 */

export const LINK_KINDS = ['markdown', 'wikilink', 'uri'] as const;

const kind = z
  .enum(LINK_KINDS)
  .describe('markdown: [text](path); wikilink: [[target]]; uri: kb://id');
const documentId = z.string();
const title = z.string();
const passage = z
  .string()
  .describe('The paragraph holding the link, cut around it (ellipses where it was cut)');
const offset = z
  .number()
  .int()
  .describe('An offset in the body, in UTF-16 code units (as JavaScript and LSP count)');

/** One link of a document, resolved or not. */
export const linkSchema = z.object({
  kind,
  target: z
    .string()
    .describe('What the link names, as written (decoded): a path, a wikilink target, an id'),
  fragment: z.string().nullable().describe('The part after #: a heading or an anchor'),
  label: z.string().describe('The text of the link'),
  document_id: documentId
    .nullable()
    .describe('The document it resolves to; null when it resolves to none (a broken link)'),
  title: title.nullable().describe('That document’s title'),
  start: offset,
  end: offset,
  target_start: offset.describe(
    'Where the target is written (for a reference link, in its definition): what a move rewrites',
  ),
  target_end: offset,
});
export type Link = z.output<typeof linkSchema>;

/** `GET /documents/{id}/links`: a document's links, in the order of its body. */
export const documentLinksSchema = z.object({
  document_id: documentId,
  links: z.array(linkSchema),
  count: z.number().int().describe('Links in the body'),
  broken: z.number().int().describe('Links that resolve to no document the caller may read'),
});
export type DocumentLinks = z.output<typeof documentLinksSchema>;

/** A document that links to another. */
export const backlinkSchema = z.object({
  document_id: documentId.describe('The linking document'),
  title,
  links: z.number().int().describe('How many of its links point at the document'),
  label: z.string().describe('The text of its first such link'),
  passage,
});
export type Backlink = z.output<typeof backlinkSchema>;

const nextCursor = z
  .string()
  .nullable()
  .describe('The `cursor` of the next page; null when this page is the last');

/** `GET /documents/{id}/backlinks`: the documents linking to one, a page at a time. */
export const backlinksSchema = z.object({
  document_id: documentId,
  backlinks: z.array(backlinkSchema).describe('In byte order of the linking document’s id'),
  count: z.number().int().describe('Linking documents in all (those the caller may read)'),
  next_cursor: nextCursor,
});
export type Backlinks = z.output<typeof backlinksSchema>;

/** A link that resolves to no document. */
export const brokenLinkSchema = z.object({
  document_id: documentId.describe('The document the link is in'),
  title,
  kind,
  target: linkSchema.shape.target,
  fragment: linkSchema.shape.fragment,
  label: linkSchema.shape.label,
  passage,
  start: offset,
  end: offset,
});

/** `GET /documents/links/broken`: a folder's broken links, a page of documents at a time. */
export const brokenLinksSchema = z.object({
  prefix: z.string().describe('The folder or prefix read'),
  items: z.array(brokenLinkSchema).describe('By document, in byte order of id, then in body order'),
  documents_read: z.number().int().describe('Documents with links read for this page'),
  next_cursor: nextCursor,
});
export type BrokenLinks = z.output<typeof brokenLinksSchema>;

/** One document of a neighbourhood, and the link it was reached by. */
export const neighbourSchema = z.object({
  document_id: documentId,
  title,
  depth: z.number().int().describe('Links between it and the document asked about'),
  direction: z
    .enum(['links_to', 'linked_from'])
    .describe('links_to: `from` links to it; linked_from: it links to `from`'),
  from: documentId.describe('The document it was reached from'),
  label: z.string().describe('The text of that link'),
  passage,
});
export type Neighbour = z.output<typeof neighbourSchema>;

/** A document, what it links to and what links to it, to a depth. */
export const neighbourhoodSchema = z.object({
  document_id: documentId,
  title,
  depth: z.number().int().describe('The depth walked'),
  neighbours: z.array(neighbourSchema).describe('Nearest first'),
  edges: z
    .array(z.object({ from: documentId, to: documentId }))
    .describe('Every link found between these documents (from links to to)'),
  truncated: z.boolean().describe('More documents were in reach than `limit`'),
});
export type Neighbourhood = z.output<typeof neighbourhoodSchema>;

/** What `get_document` says of a document's links: counts and the first ones. */
export const linkSummarySchema = z.object({
  links: z.number().int().describe('Links in the body'),
  broken: z.number().int().describe('Of those, links that resolve to no document'),
  backlinks: z.number().int().describe('Documents linking to this one'),
  links_to: z
    .array(z.object({ document_id: documentId, title, label: z.string() }))
    .describe('The first documents it links to'),
  linked_from: z
    .array(backlinkSchema.pick({ document_id: true, title: true, passage: true }))
    .describe('The first documents linking to it'),
});
export type LinkSummary = z.output<typeof linkSummarySchema>;
