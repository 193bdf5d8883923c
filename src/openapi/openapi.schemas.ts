import { z } from 'zod';
import { ErrorCode } from '../common/domain-error';
import {
  deleteResultSchema,
  documentSchema,
  readDocumentSchema,
  documentSummarySchema,
  historyResultSchema,
  revisionSchema,
  listResultSchema,
  patchResultSchema,
  writeResultSchema,
  writtenDocumentSchema,
  bulkResultSchema,
  changeFeedSchema,
  folderTreeSchema,
} from '../documents/document.schemas';
import { restoreResultSchema } from '../backup/backup.schemas';
import {
  backlinksSchema,
  brokenLinksSchema,
  documentLinksSchema,
  neighbourhoodSchema,
} from '../documents/links.schemas';
import { liveSchema, readySchema } from '../health/health.schemas';
import { sourceDeclarationSchema } from '../sources/source-declaration';
import {
  sourceDetailSchema,
  sourceListSchema,
  sourceRunSchema,
  sourceRunsSchema,
} from '../sources/sources.schemas';
import { searchResponseSchema } from '../vectors/search/search.schemas';
import { reindexResultSchema, vectorsStatusSchema } from '../vectors/vectors-admin.schemas';

/**
 * The components of the admin REST answers in the OpenAPI document: each shape is the one
 * its module describes (document.schemas.ts, search.schemas.ts, vectors-admin.schemas.ts,
 * sources.schemas.ts, health.schemas.ts); only the error body, which every edge of HTTP
 * handling answers, is described here. Request bodies are the controllers' own zod schemas, converted where the
 * document is built. test/published-shapes.e2e-spec.ts checks real answers against them.
 */

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
  ReadDocument: readDocumentSchema,
  WrittenDocument: writtenDocumentSchema,
  DocumentSummary: documentSummarySchema,
  WriteResult: writeResultSchema,
  PatchResult: patchResultSchema,
  DeleteResult: deleteResultSchema,
  BulkResult: bulkResultSchema,
  ListResult: listResultSchema,
  HistoryResult: historyResultSchema,
  Revision: revisionSchema,
  HistoryOrRevision: z
    .union([historyResultSchema, revisionSchema])
    .describe('The history page; with `revision`, that version whole'),
  ChangeFeed: changeFeedSchema,
  FolderTree: folderTreeSchema,
  DocumentLinks: documentLinksSchema,
  Backlinks: backlinksSchema,
  BrokenLinks: brokenLinksSchema,
  Neighbourhood: neighbourhoodSchema,
  SearchResponse: searchResponseSchema,
  VectorsStatus: vectorsStatusSchema,
  ReindexResult: reindexResultSchema,
  RestoreResult: restoreResultSchema,
  SourceList: sourceListSchema,
  Source: sourceDetailSchema,
  SourceRun: sourceRunSchema,
  SourceRuns: sourceRunsSchema,
  SourceDeclaration: sourceDeclarationSchema.describe(
    'A source as SOURCES_FILE and POST /sources declare it: a folder, a git repository or a web site',
  ),
  Live: liveSchema,
  Ready: readySchema,
  Error: errorSchema,
} as const;

export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS;
