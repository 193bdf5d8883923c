import { z } from 'zod';
import type { DocumentLimits } from '../../config/app-config';
import { fieldsOf } from '../../common/schema-fields';
import { documentSchema, expectedRevisionSchema } from '../../documents/document.schemas';

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

export const expectedRevisionArg = expectedRevisionSchema
  .optional()
  .describe(
    'The revision you read (from get_document_for_rewrite). The write happens only if the document is still at this revision; otherwise REVISION_CONFLICT reports the current one.',
  );

/**
 * The arguments whose limits the server's configuration sets (MAX_BODY_BYTES,
 * MAX_TITLE_CHARS, MAX_TAGS, MAX_METADATA_BYTES): their descriptions say the limits in force.
 */
export function limitedArgs(limits: DocumentLimits) {
  return {
    content: z.string().describe(`The markdown body (at most ${size(limits.maxBodyBytes)}).`),
    title: z
      .string()
      .describe(
        `Title (at most ${limits.maxTitleChars} characters); by default the first markdown heading, else the last id segment.`,
      ),
    tags: z.array(z.string()).describe(`Tags (at most ${limits.maxTags} short strings).`),
    metadata: z
      .record(z.string(), z.unknown())
      .describe(
        `Free-form JSON object stored with the document (at most ${size(limits.maxMetadataBytes)}).`,
      ),
  };
}

/** `1048576` → `1 MiB`, `65536` → `64 KiB`, other sizes in bytes. */
function size(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** A document's fields as results show them, in this order (the document's own schemas). */
const documentViewSchema = documentSchema.pick({
  document_id: true,
  parent_id: true,
  title: true,
  tags: true,
  metadata: true,
  revision: true,
  vector_status: true,
  created_at: true,
  updated_at: true,
});
export const documentFields = documentViewSchema.shape;

/** A document's {@link documentFields}, in their order. */
export const documentView = fieldsOf(documentViewSchema);

/** What every write tool answers: the document's fields after the write, and `changed`. */
export const writeResult = documentSchema
  .pick({ document_id: true, revision: true, title: true, vector_status: true, updated_at: true })
  .extend({
    revision: documentSchema.shape.revision.describe('The revision after the write.'),
    changed: z.boolean().describe('false when the write changed nothing (same revision).'),
  });

/** Cuts `text` to at most `max` UTF-16 units without splitting a surrogate pair. */
export function cut(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), truncated: true };
}
