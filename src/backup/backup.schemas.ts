import { z } from 'zod';
import { timestampSchema } from '../documents/document.schemas';

/** The answer of `POST /admin/restore`, described once (OpenAPI publishes it). */
export const restoreResultSchema = z.object({
  restored: z.record(z.string(), z.number().int()).describe('Rows restored per table'),
  schema: z.string().describe('The schema (last migration) of the database backed up'),
  created_at: timestampSchema.describe('When the backup was taken'),
  audit_through: z
    .number()
    .int()
    .describe('The highest audit id in the backup: the change feed goes on after it'),
  lexically_indexed: z
    .number()
    .int()
    .describe('Documents lexical search finds at this answer; vectors follow'),
  lexically_indexable: z
    .number()
    .int()
    .describe(
      'Documents lexical search is to find: those alive, with a body, not under VECTOR_SKIP_PREFIXES',
    ),
  lexical_complete: z
    .boolean()
    .describe(
      'Whether lexical search finds every one of them at this answer; if not, the rest follows in the background (GET /admin/vectors/status counts them under `lexical_coverage`)',
    ),
  seconds: z.number(),
});
export type RestoreResult = z.output<typeof restoreResultSchema>;
