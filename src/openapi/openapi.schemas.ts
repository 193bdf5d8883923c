import { z } from 'zod';
import { ErrorCode } from '../common/domain-error';
import { SEARCH_MODES } from '../vectors/search/search.service';

/**
 * Shapes of the admin REST answers, for the OpenAPI document only (nothing validates
 * answers against them). Request bodies are not here: they are the controllers' own zod
 * schemas, converted where the document is built.
 */

const timestamp = z.string().describe('ISO 8601 timestamp');
const vectorStatus = z.enum(['pending', 'ready', 'error', 'skipped', 'removed']);

export const documentSummarySchema = z.object({
  document_id: z.string().describe('Path-like id, e.g. knowledge/current-state/reports/phase-2.md'),
  parent_id: z
    .string()
    .nullable()
    .describe('The id of the folder (the id without its last segment)'),
  title: z.string(),
  tags: z.array(z.string()),
  revision: z.number().int().describe('Starts at 1, +1 on every change of content or metadata'),
  updated_at: timestamp,
});

export const documentSchema = documentSummarySchema.extend({
  body: z
    .string()
    .describe("Markdown text (left out of a write's answer under `Prefer: return=minimal`)"),
  metadata: z
    .record(z.string(), z.unknown())
    .describe("Left out of a write's answer under `Prefer: return=minimal`"),
  content_hash: z.string(),
  vector_status: vectorStatus.describe(
    'Semantic indexing state; indexing follows writes within seconds',
  ),
  vector_revision: z.number().int().nullable().describe('Revision the vectors were computed from'),
  created_at: timestamp,
  deleted_at: timestamp.nullable(),
});

export const writeResultSchema = documentSchema.extend({
  changed: z
    .boolean()
    .describe('false when the write changed nothing (same revision, no re-embedding)'),
});

export const patchResultSchema = writeResultSchema.extend({
  replacements: z.number().int().describe('Occurrences of old_str replaced'),
});

export const deleteResultSchema = z.object({
  document_id: z.string(),
  revision: z.number().int(),
  deleted_at: timestamp,
});

export const listResultSchema = z.object({
  items: z.array(documentSummarySchema).describe('Ordered by id in byte order'),
  count: z.number().int().describe('Items in this page (same as returned_count)'),
  returned_count: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  next_offset: z.number().int().nullable().describe('Offset of the next page; null at the end'),
  truncated: z.boolean().describe('More documents match than this page holds'),
});

export const historyResultSchema = z.object({
  document_id: z.string(),
  current_revision: z.number().int(),
  deleted: z.boolean(),
  items: z
    .array(
      z.object({
        revision: z.number().int(),
        title: z.string(),
        tags: z.array(z.string()),
        body_bytes: z.number().int(),
        content_hash: z.string(),
        deleted_at: timestamp.nullable(),
        reason: z.string().describe('The statement that replaced this version: update or delete'),
        actor: z.string().describe('Name of the API key that made the change'),
        snapshot_at: timestamp,
      }),
    )
    .describe('Snapshots of earlier versions'),
  next_offset: z.number().int().nullable(),
});

export const searchResponseSchema = z.object({
  results: z.array(
    z.object({
      document_id: z.string(),
      title: z.string(),
      score: z
        .number()
        .describe(
          'Higher is better, within one answer: fused reciprocal rank (hybrid), cosine similarity (vector) or full-text rank (lexical)',
        ),
      heading_path: z.string().describe('Headings above the passage, "" when none'),
      snippet: z.string().describe('The best passage, query words in **bold** where found'),
    }),
  ),
  mode: z.enum(SEARCH_MODES),
  degraded: z
    .boolean()
    .optional()
    .describe('true when hybrid answered from the lexical side alone (the vector side failed)'),
  degraded_reason: z.string().optional(),
});

export const vectorsStatusSchema = z
  .object({
    sync_enabled: z.boolean(),
    cluster_role: z
      .enum(['single', 'vector', 'web'])
      .describe(
        'This process in cluster mode (WEB_CONCURRENCY): `listener` and `worker` are its own; only the `vector` worker runs them',
      ),
    counts: z.record(vectorStatus, z.number().int()).describe('Documents per vector status'),
    leased: z.number().int().describe('Documents currently held by a worker'),
    lag_seconds: z.number().describe('Age of the oldest pending document (0 when none)'),
    errors: z.array(
      z.object({
        document_id: z.string(),
        error: z.string().nullable(),
        attempts: z.number().int(),
        next_attempt_at: timestamp.nullable(),
      }),
    ),
    listener: z.record(z.string(), z.unknown()).describe('LISTEN connection state'),
    worker: z.record(z.string(), z.unknown()),
    embedder: z.record(z.string(), z.unknown()).describe('Provider, model, dimensions, last error'),
    store: z.record(z.string(), z.unknown()).describe('Vector store name and readiness'),
  })
  .catchall(z.unknown());

export const reindexResultSchema = z.object({
  queued: z.number().int().describe('Documents queued for embedding'),
  prefix: z.string().nullable(),
});

export const liveSchema = z.object({ status: z.literal('ok') });

export const readySchema = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.record(
    z.string(),
    z.object({ ok: z.boolean(), required: z.boolean(), detail: z.unknown().optional() }),
  ),
});

/** Codes the REST edge answers with: the domain codes plus those of HTTP handling itself. */
const errorCodes = [
  ...Object.values(ErrorCode),
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'METHOD_NOT_ALLOWED',
  'NOT_ACCEPTABLE',
  'UNSUPPORTED_MEDIA_TYPE',
  'BAD_REQUEST',
  'HEADERS_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'INTERNAL',
] as const;

export const errorSchema = z.object({
  error: z
    .object({
      code: z
        .string()
        .describe(`${errorCodes.join(', ')}; HTTP_<status> for other statuses of HTTP handling`),
      message: z.string(),
      field: z.string().optional().describe('The invalid field, for INVALID_ARGUMENT'),
    })
    .catchall(z.unknown())
    .describe('Further details depend on the code (e.g. current_revision for REVISION_CONFLICT)'),
});

/** Component name → schema, registered once under `components.schemas`. */
export const RESPONSE_SCHEMAS = {
  Document: documentSchema,
  DocumentSummary: documentSummarySchema,
  WriteResult: writeResultSchema,
  PatchResult: patchResultSchema,
  DeleteResult: deleteResultSchema,
  ListResult: listResultSchema,
  HistoryResult: historyResultSchema,
  SearchResponse: searchResponseSchema,
  VectorsStatus: vectorsStatusSchema,
  ReindexResult: reindexResultSchema,
  Live: liveSchema,
  Ready: readySchema,
  Error: errorSchema,
} as const;

export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS;
