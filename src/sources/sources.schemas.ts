import { z } from 'zod';
import { timestampSchema } from '../documents/document.schemas';
import { sourceDeclarationSchema } from './source-declaration';

/**
 * The answers of `/sources`, described once: SourcesService's views are typed from them and
 * the OpenAPI document publishes them (test/published-shapes.e2e-spec.ts checks real answers
 * against it).
 */

/** A run's states: queued and running are active (one per source at most), the others ended. */
export const RUN_STATUSES = [
  'queued',
  'running',
  'succeeded',
  'completed_with_errors',
  'failed',
  'cancelled',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * What asked for a run: the source's declaration (its first run, and the first after its
 * declaration changed), a sync over the API, the source's schedule, or its watched folder.
 */
export const RUN_TRIGGERS = ['declared', 'manual', 'schedule', 'watch'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

export const runCountsSchema = z.object({
  checked: z
    .number()
    .int()
    .describe(
      'Items the source listed, or all it holds when it tells that none changed (a git commit that did not move)',
    ),
  created: z.number().int(),
  updated: z.number().int(),
  moved: z.number().int().describe('Items renamed at the source, their documents moved'),
  unchanged: z.number().int(),
  deleted: z.number().int(),
  held: z
    .number()
    .int()
    .describe('Deletions beyond max_delete, waiting for a sync with confirm_deletions=true'),
  skipped: z.number().int().describe('Items not taken (their type, their size)'),
  failed: z.number().int().describe('Items that could not be read or written (failed_items)'),
});
export type RunCounts = z.output<typeof runCountsSchema>;

/** One run of a source. */
export const sourceRunSchema = z.object({
  id: z.string().describe('The run, a decimal number: a later run has a larger one'),
  source_id: z.string(),
  status: z.enum(RUN_STATUSES),
  trigger: z.enum(RUN_TRIGGERS),
  confirm_deletions: z.boolean().describe('Whether the run may make deletions beyond max_delete'),
  queued_at: timestampSchema,
  started_at: timestampSchema.nullable(),
  finished_at: timestampSchema.nullable(),
  version: z
    .string()
    .nullable()
    .describe(
      'Where the source stood, in its own terms: `main@1a2b3c4` for git, the files or pages seen for the others; null until the run ends, or when it failed',
    ),
  counts: runCountsSchema.describe('All zero until the run ends'),
  failed_items: z
    .array(z.object({ key: z.string(), document_id: z.string(), reason: z.string() }))
    .describe('Under an access policy, only the documents the caller may read'),
  message: z.string().nullable().describe('Why the run failed, was cancelled or held deletions'),
});
export type RunView = z.output<typeof sourceRunSchema>;

/** A declared source and where it stands. */
export const sourceSchema = z.object({
  id: z.string(),
  kind: z.enum(['folder', 'git', 'web']),
  mount: z.string().describe('The folder of the knowledge base its documents are written under'),
  origin: z.enum(['file', 'api']).describe('Declared in SOURCES_FILE, or over the API'),
  declaration: sourceDeclarationSchema,
  state: z
    .enum(['idle', 'queued', 'running', 'paused', 'failing'])
    .describe(
      'queued or running: its run; failing: its last run failed (retried after 0 s, 15 min, 1 h, 6 h); paused: its schedule stopped after failing five times in a row, until a run succeeds (a sync, or a changed declaration)',
    ),
  documents: z
    .number()
    .int()
    .nullable()
    .describe(
      'Documents the source owns; null under an access policy for a caller who may not read the whole mount',
    ),
  next_run_at: timestampSchema.nullable().describe('When its schedule runs it next; null: paused'),
  last_success_at: timestampSchema.nullable(),
  failures: z.number().int().describe('Runs failed in a row'),
  held_deletions: z
    .number()
    .int()
    .describe('Deletions held beyond max_delete, until a sync with confirm_deletions=true'),
  last_run: sourceRunSchema.nullable(),
});
export type SourceView = z.output<typeof sourceSchema>;

const fileErrorSchema = z
  .string()
  .nullable()
  .describe('Why SOURCES_FILE was last refused (the sources stay as they were); null: applied');

/** `GET /sources/{id}`, and the answer of a declaration. */
export const sourceDetailSchema = sourceSchema.extend({ file_error: fileErrorSchema });
export type SourceDetail = z.output<typeof sourceDetailSchema>;

/** `GET /sources`. */
export const sourceListSchema = z.object({
  sources: z.array(sourceSchema).describe('By id'),
  file: z.string().nullable().describe('SOURCES_FILE, when the sources are declared there'),
  file_error: fileErrorSchema,
});
export type SourceList = z.output<typeof sourceListSchema>;

/** `GET /sources/{id}/runs`. */
export const sourceRunsSchema = z.object({
  runs: z.array(sourceRunSchema).describe('Newest first'),
});
