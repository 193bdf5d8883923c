import { z } from 'zod';
import type { Document } from '../../documents/documents.service';

/** Zod pieces shared by the document tools: argument fields and result shapes. */

export const documentIdArg = z
  .string()
  .describe(
    'Document id: a path such as knowledge/topic/page.md ("/"-separated segments, no leading or trailing "/", at most 512 bytes). Case-sensitive.',
  );

export const pathAliasArg = z
  .string()
  .optional()
  .describe('Another name for document_id; give one of them.');

/** The arguments naming one document: `document_id` and its alias `path`. */
export const documentIdArgs = { document_id: documentIdArg, path: pathAliasArg };

export const bodyAliasArg = z
  .string()
  .optional()
  .describe('Another name for content; give one of them.');

export const expectedRevisionArg = z
  .number()
  .int()
  .positive()
  .optional()
  .describe(
    'The revision you read (from get_document_for_rewrite). The write happens only if the document is still at this revision; otherwise REVISION_CONFLICT reports the current one.',
  );

export const tagsArg = z.array(z.string()).describe('Tags (at most 50 short strings).');

export const metadataArg = z
  .record(z.string(), z.unknown())
  .describe('Free-form JSON object stored with the document (at most 64 KiB).');

const timestamp = z.string().describe('ISO 8601 time');

export const vectorStatus = z
  .enum(['pending', 'ready', 'error', 'skipped', 'removed'])
  .describe(
    'Semantic index state: pending right after a write (search catches up within seconds), ready once indexed, skipped for prefixes that are never indexed.',
  );

/** A document's fields as results show them, one zod schema each, in this order. */
export const documentFields = {
  document_id: z.string(),
  parent_id: z.string().nullable(),
  title: z.string(),
  tags: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
  revision: z.number().int(),
  vector_status: vectorStatus,
  created_at: timestamp,
  updated_at: timestamp,
};

/** A document's {@link documentFields}, in their order (written out: built per read). */
export function documentView(document: Document): DocumentView {
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
  };
}

type DocumentView = { [K in keyof typeof documentFields]: z.output<(typeof documentFields)[K]> };

export const documentSummary = z.object({
  document_id: documentFields.document_id,
  parent_id: documentFields.parent_id.describe('The folder part of the id; null at the top level.'),
  title: documentFields.title,
  tags: documentFields.tags,
  revision: documentFields.revision,
  updated_at: timestamp,
});

/** What every write tool answers. */
export const writeResult = z.object({
  document_id: z.string(),
  revision: z.number().int().describe('The revision after the write.'),
  changed: z.boolean().describe('false when the write changed nothing (same revision).'),
  title: z.string(),
  vector_status: vectorStatus,
  updated_at: timestamp,
});

export { timestamp };

/** The fields of `source` named by `keys`, in the order of `keys`. */
export function pick<T, K extends keyof T>(source: T, keys: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const key of keys) picked[key] = source[key];
  return picked;
}

/** The field names of a zod object shape, in its order. */
export function keysOf<S extends object>(shape: S): (keyof S & string)[] {
  return Object.keys(shape) as (keyof S & string)[];
}

/** Cuts `text` to at most `max` UTF-16 units without splitting a surrogate pair. */
export function cut(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), truncated: true };
}
