import { z } from 'zod';
import { ErrorCode } from '../common/domain-error';
import {
  deleteResultSchema,
  documentSchema,
  documentSummarySchema,
  historyResultSchema,
  listResultSchema,
  patchResultSchema,
  timestampSchema,
  vectorStatusSchema,
  writeResultSchema,
  writtenDocumentSchema,
} from '../documents/document.schemas';
import { searchResponseSchema } from '../vectors/search/search.schemas';

/**
 * The components of the admin REST answers in the OpenAPI document: the shapes of
 * documents and searches are those their modules describe (document.schemas.ts,
 * search.schemas.ts); the operational ones are described here. Request bodies are the
 * controllers' own zod schemas, converted where the document is built.
 * test/published-shapes.e2e-spec.ts checks real answers against them.
 */

const timestamp = timestampSchema;
const vectorStatus = vectorStatusSchema;

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
  WrittenDocument: writtenDocumentSchema,
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
