import { z } from 'zod';

/**
 * The shapes of documents as the API answers them (and of a patch, as it is asked), each
 * described once, here: the TypeScript types and the rows' conversion (document-rows.ts)
 * are derived from these schemas, the MCP tools' schemas pick their fields from them
 * (src/mcp/tools), and the OpenAPI document of the admin API publishes them (src/openapi).
 * test/published-shapes.e2e-spec.ts checks real answers against both.
 */

export const timestampSchema = z.string().describe('ISO 8601 time');

export const VECTOR_STATUSES = ['pending', 'ready', 'error', 'skipped', 'removed'] as const;

export const vectorStatusSchema = z
  .enum(VECTOR_STATUSES)
  .describe(
    'Semantic index state: pending right after a write (search catches up within seconds), ready once indexed, skipped for prefixes that are never indexed.',
  );
export type VectorStatus = z.output<typeof vectorStatusSchema>;

/** The revision a write is conditional on (REST `expected_revision`, the MCP tools' too). */
export const expectedRevisionSchema = z.number().int().positive();

/**
 * A patch as the REST route and the MCP tool take it: `old_str` becomes `new_str` (the rules
 * are DocumentsService.patch's).
 */
export const patchInputSchema = z.strictObject({
  old_str: z.string(),
  new_str: z.string(),
  replace_all: z.boolean().optional(),
  expected_revision: expectedRevisionSchema.optional(),
});
export type PatchInput = z.output<typeof patchInputSchema>;

/** A document, whole, as `GET /documents/{id}` answers it. */
export const documentSchema = z.object({
  document_id: z.string(),
  parent_id: z.string().nullable(),
  title: z.string(),
  tags: z.array(z.string()),
  body: z.string().describe('Markdown text'),
  metadata: z.record(z.string(), z.unknown()),
  revision: z.number().int(),
  content_hash: z.string().describe('SHA-256 of the body'),
  vector_status: vectorStatusSchema,
  vector_revision: z
    .number()
    .int()
    .nullable()
    .describe('The revision the vectors were computed from'),
  created_at: timestampSchema,
  updated_at: timestampSchema,
  deleted_at: timestampSchema.nullable(),
});
export type Document = z.output<typeof documentSchema>;

/**
 * A document as `GET /documents/{id}` answers it: with the source that keeps it in sync, if
 * one does (its metadata's `source_id` says where it came from, which stays after a copy or
 * once the source has let it go; this says who may write it).
 */
export const readDocumentSchema = documentSchema.extend({
  source: z
    .object({ id: z.string(), uri: z.string() })
    .nullable()
    .describe(
      'The source that keeps this document in sync: it is read-only to every other writer. null when none does',
    ),
});
export type ReadDocument = z.output<typeof readDocumentSchema>;

/** A document in a listing: no body, no metadata. */
export const documentSummarySchema = documentSchema
  .pick({
    document_id: true,
    parent_id: true,
    title: true,
    tags: true,
    revision: true,
    updated_at: true,
    vector_status: true,
  })
  .extend({
    parent_id: documentSchema.shape.parent_id.describe(
      'The folder part of the id; null at the top level.',
    ),
  });
export type DocumentSummary = z.output<typeof documentSummarySchema>;

/** A page of a listing by offset (`GET /documents`, `list_documents`). */
export const listResultSchema = z.object({
  items: z.array(documentSummarySchema),
  count: z.number().int().describe('Items in this page.'),
  returned_count: z.number().int().describe('Same as count.'),
  limit: z.number().int(),
  offset: z.number().int(),
  next_offset: z
    .number()
    .int()
    .nullable()
    .describe('Offset of the next page; null when this page is the last.'),
  truncated: z.boolean().describe('More documents match than this page holds.'),
});
export type ListResult = z.output<typeof listResultSchema>;

/**
 * A document as a REST write answers it: without the `body` and `metadata` just sent when
 * the client asked `Prefer: return=minimal`.
 */
export const writtenDocumentSchema = documentSchema.extend({
  body: documentSchema.shape.body.optional().describe('Left out under Prefer: return=minimal'),
  metadata: documentSchema.shape.metadata
    .optional()
    .describe('Left out under Prefer: return=minimal'),
});

/** What an update or a restore answers: the written document, and whether it changed. */
export const writeResultSchema = writtenDocumentSchema.extend({
  changed: z
    .boolean()
    .describe('false when the write changed nothing (same revision, nothing re-embedded).'),
});

export const patchResultSchema = writeResultSchema.extend({
  replacements: z.number().int().describe('How many occurrences were replaced.'),
});

export const deleteResultSchema = documentSchema.pick({
  document_id: true,
  revision: true,
  deleted_at: true,
});

/** Items of one bulk write at most. */
export const BULK_MAX_ITEMS = 500;

/** One item's outcome in a bulk write: what the same single write would have answered. */
export const bulkItemResultSchema = z.object({
  document_id: z.string(),
  ok: z.boolean(),
  status: z
    .number()
    .int()
    .describe('The HTTP status the same single write would have answered (201, 200, 404, 409…)'),
  revision: z.number().int().optional().describe('The revision written (or kept), when ok'),
  changed: z.boolean().optional().describe('false when an update changed nothing'),
  error: z
    .object({ code: z.string(), message: z.string() })
    .catchall(z.unknown())
    .optional()
    .describe('Why this item was refused; the others are unaffected'),
});

/** A bulk write's answer: one result per item, in the order sent. */
export const bulkResultSchema = z.object({
  results: z.array(bulkItemResultSchema),
  succeeded: z.number().int(),
  failed: z.number().int(),
});

export type BulkResult = z.output<typeof bulkResultSchema>;

/** An earlier version of a document, as the history lists it (the body's size, not the body). */
export const historyEntrySchema = z.object({
  revision: z.number().int(),
  title: z.string(),
  tags: z.array(z.string()),
  body_bytes: z.number().int(),
  content_hash: z.string(),
  deleted_at: timestampSchema.nullable(),
  reason: z
    .string()
    .describe(
      'The statement that replaced this version: delete (soft or purge) or update (a restore included)',
    ),
  actor: z.string().describe('Who made the change: the API key name or the token subject'),
  snapshot_at: timestampSchema,
});
export type HistoryEntry = z.output<typeof historyEntrySchema>;

export const historyResultSchema = z.object({
  document_id: z.string(),
  current_revision: z.number().int(),
  deleted: z.boolean(),
  items: z.array(historyEntrySchema).describe('Snapshots of earlier versions, newest first'),
  next_offset: z.number().int().nullable(),
});
export type HistoryResult = z.output<typeof historyResultSchema>;

/** One earlier version whole, body included (`GET /documents/{id}/history/{revision}`). */
export const revisionSchema = historyEntrySchema.omit({ body_bytes: true }).extend({
  document_id: z.string(),
  body: z.string().describe('Markdown text of that version'),
  metadata: z.record(z.string(), z.unknown()),
});
export type Revision = z.output<typeof revisionSchema>;

/** A keyset page of documents, as MCP resource listings show them. */
export const documentPageSchema = z.object({
  items: z.array(
    documentSchema
      .pick({ document_id: true, title: true, revision: true, updated_at: true })
      .extend({ size: z.number().int().describe('Body length in bytes (UTF-8).') }),
  ),
  more: z.boolean().describe('More documents follow the last item.'),
});
export type DocumentPage = z.output<typeof documentPageSchema>;

/** Rows of a page of the change feed, by default and at most. */
export const CHANGES_DEFAULT_LIMIT = 50;
export const CHANGES_MAX_LIMIT = 500;

/** One row of the audit trail, as the change feed (`GET /documents/changes`) shows it. */
export const changeSchema = z.object({
  id: z
    .number()
    .int()
    .describe('The place of the row in the audit trail; later rows have larger ids'),
  operation: z
    .string()
    .describe(
      'create, update (a patch too), delete, restore, purge, move (under the new id), ' +
        'moved-away (under the old id), or refused:<create|update|patch|delete|restore|move> ' +
        '(a write the access policy refused)',
    ),
  document_id: z.string().describe('The current id of the document (a move takes its rows along)'),
  revision: z
    .number()
    .int()
    .nullable()
    .describe('The revision the write made; null for a refused one'),
  actor: z.string().describe('Who wrote: the API key name or the token subject'),
  at: timestampSchema.describe('When the writing transaction began'),
});
export type Change = z.output<typeof changeSchema>;

export const changeFeedSchema = z.object({
  changes: z.array(changeSchema).describe('Newest first'),
  next_cursor: z
    .string()
    .nullable()
    .describe('The `cursor` of the next (older) page; null when this page is the last'),
});
export type ChangeFeed = z.output<typeof changeFeedSchema>;

/** Folders of the folder tree (`GET /documents/folders`) at most. */
export const FOLDER_TREE_MAX_FOLDERS = 500;

/** A folder's immediate subfolders, with how many documents each holds. */
export const folderTreeSchema = z.object({
  parent: z.string().nullable().describe('The folder listed; null for the root'),
  documents_here: z.number().int().describe('Documents directly in `parent`'),
  folders: z
    .array(
      z.object({
        folder: z.string().describe('The full path of the subfolder (`parent/name`)'),
        documents: z.number().int().describe('Documents in its whole subtree'),
      }),
    )
    .describe('In byte order of the path'),
  truncated: z
    .boolean()
    .describe(`More than ${FOLDER_TREE_MAX_FOLDERS} subfolders: the first ones are listed`),
});
export type FolderTree = z.output<typeof folderTreeSchema>;
