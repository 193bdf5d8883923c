import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { validateDocumentId } from '../../documents/document-id';
import { DocumentsService } from '../../documents/documents.service';
import { type Document, documentSchema } from '../../documents/document.schemas';
import { resourceLink } from '../resources/document-resources';
import { McpTool, type ToolContext } from './tool';
import { cut } from './document-fields';
import { READ_ONLY } from './tool-annotations';

export const BATCH_READ_MAX_IDS = 20;
export const BATCH_READ_DEFAULT_CHARS = 4000;
export const BATCH_READ_MAX_CHARS = 100_000;
/** Documents read per step when the caller follows progress. */
const PROGRESS_STEP = 5;

const input = z.strictObject({
  document_ids: z
    .array(z.string())
    .min(1)
    .max(BATCH_READ_MAX_IDS)
    .describe(`Ids of the documents to read, 1 to ${BATCH_READ_MAX_IDS}.`),
  paths: z
    .array(z.string())
    .optional()
    .describe('Another name for document_ids; give one of them.'),
  max_chars: z
    .number()
    .int()
    .min(1)
    .max(BATCH_READ_MAX_CHARS)
    .optional()
    .describe(
      `Longest body returned per document, in characters (default ${BATCH_READ_DEFAULT_CHARS}, at most ${BATCH_READ_MAX_CHARS}).`,
    ),
});

const { document_id, title, tags, revision, updated_at } = documentSchema.shape;

/** The document's own fields, present when it was found. */
const item = z.object({
  document_id,
  found: z.boolean().describe('false when the document does not exist or is deleted.'),
  title: title.optional(),
  tags: tags.optional(),
  revision: revision.optional(),
  updated_at: updated_at.optional(),
  body: z.string().optional(),
  body_chars: z.number().int().optional().describe('Length of the whole body.'),
  truncated: z.boolean().optional().describe('The body was cut at max_chars.'),
});

const output = z.object({
  items: z.array(item).describe('One item per requested id, in the order asked.'),
  count: z.number().int(),
  found_count: z.number().int(),
});

@Injectable()
export class BatchReadTool extends McpTool<typeof input, typeof output> {
  readonly name = 'batch_read';
  readonly title = 'Read several documents';
  readonly description = [
    `Reads up to ${BATCH_READ_MAX_IDS} documents in one call: one item per id, in the order given, with found: false for ids that do not exist (no error).`,
    `Bodies are cut at max_chars characters (default ${BATCH_READ_DEFAULT_CHARS}) and marked truncated: true; read a long document whole with get_document_for_rewrite.`,
    'Use it after search_knowledge or list_documents to read the most relevant hits together.',
  ].join(' ');
  readonly input = input;
  readonly output = output;
  readonly aliases = { paths: 'document_ids' };
  readonly annotations = READ_ONLY;

  constructor(private readonly documents: DocumentsService) {
    super();
  }

  override links(result: z.output<typeof output>) {
    return result.items.filter((item) => item.found).map((item) => resourceLink(item));
  }

  async run(args: z.output<typeof input>, context: ToolContext) {
    const ids = [...new Set(args.document_ids)];
    const max = args.max_chars ?? BATCH_READ_DEFAULT_CHARS;
    const found =
      context.progress === undefined || ids.length <= PROGRESS_STEP
        ? await this.documents.getMany(ids, context.access)
        : await this.readInSteps(ids, context);
    const items = ids.map((id) => {
      const document = found.get(id);
      if (!document) return { document_id: id, found: false };
      const body = cut(document.body, max);
      return {
        document_id: id,
        found: true,
        title: document.title,
        tags: document.tags,
        revision: document.revision,
        updated_at: document.updated_at,
        body: body.text,
        body_chars: document.body.length,
        truncated: body.truncated,
      };
    });
    return { items, count: items.length, found_count: found.size };
  }

  override documentIdOf(args: z.output<typeof input>): string | undefined {
    return args.document_ids.join(',').slice(0, 512);
  }

  /** Reads `ids` a few at a time, reporting after each step and stopping when cancelled. */
  private async readInSteps(ids: string[], context: ToolContext): Promise<Map<string, Document>> {
    // Every id is checked before anything is read, with its place in the request.
    ids.forEach((id, i) => validateDocumentId(id, `document_ids[${i}]`));
    const found = new Map<string, Document>();
    context.progress?.(0, ids.length, `reading ${ids.length} documents`);
    for (let start = 0; start < ids.length; start += PROGRESS_STEP) {
      context.signal.throwIfAborted();
      for (const [id, document] of await this.documents.getMany(
        ids.slice(start, start + PROGRESS_STEP),
        context.access,
      )) {
        found.set(id, document);
      }
      const done = Math.min(start + PROGRESS_STEP, ids.length);
      context.progress?.(done, ids.length, `read ${done} of ${ids.length} documents`);
    }
    return found;
  }
}
