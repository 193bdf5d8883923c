import type { ParameterObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import {
  createSchema,
  patchSchema,
  bulkSchema,
  moveSchema,
  restoreSchema,
  updateSchema,
} from '../documents/documents.controller';
import {
  BULK_MAX_ITEMS,
  CHANGES_DEFAULT_LIMIT,
  CHANGES_MAX_LIMIT,
  FOLDER_TREE_MAX_FOLDERS,
} from '../documents/document.schemas';
import { AUDITED_OPERATIONS } from '../documents/write-operations';
import { reindexSchema } from '../vectors/vectors-admin.controller';
import { header, linksById, type OperationDoc, query } from './operation-doc';
import { BACKUP_API_OPERATIONS } from './backup-api.operations';
import { LINKS_API_OPERATIONS } from './links-api.operations';
import { SOURCES_API_OPERATIONS } from './sources-api.operations';

const idParameter: ParameterObject = {
  name: 'id',
  in: 'path',
  required: true,
  description:
    'Document id, slashes included (`knowledge/reports/q3.md`). An id whose segment holds a ' +
    'literal `/`, or that ends in `/history`, `/restore`, `/move`, `/links`, `/backlinks` or ' +
    '`/neighbourhood`, is sent with that slash as `%2F`.',
  schema: { type: 'string' },
};

const page = (max: number, fallback: number) => [
  query('limit', `Page size, 1 to ${max} (more is an error, not a silent clamp)`, {
    type: 'integer',
    minimum: 1,
    maximum: max,
    default: fallback,
  }),
  query('offset', 'Items to skip', { type: 'integer', minimum: 0, default: 0 }),
];

const ifMatch = header(
  'If-Match',
  'Revision ETag (`"3"`) the write is conditional on; a mismatch answers 412 with the current revision',
);

const prefer = header(
  'Prefer',
  '`return=minimal` (RFC 7240): answer without `body` and `metadata` (what was just sent), ' +
    'with `Preference-Applied: return=minimal`',
);

/**
 * Every admin REST operation, keyed `METHOD /path` as it appears in the document (Nest's
 * `*id` wildcard becomes `{id}`). The test in test/deploy/openapi.e2e-spec.ts fails when a
 * route of the application has no entry here, or an entry matches no route.
 */
export const ADMIN_API_OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'GET /documents': {
    tag: 'Documents',
    summary: 'List documents under a prefix',
    description: 'Alive documents whose id starts with `prefix`, ordered by id in byte order.',
    parameters: [
      query('prefix', 'Id prefix (`%`, `_` and `\\` match themselves)', { type: 'string' }),
      query('path', 'Alias of `prefix`', { type: 'string' }),
      ...page(100, 50),
    ],
    responses: { 200: { description: 'One page of summaries', schema: 'ListResult' } },
  },
  'POST /documents': {
    tag: 'Documents',
    idempotent: true,
    summary: 'Create a document',
    description:
      'Give `document_id` (or `path`) and `body` (or `content`). Answers once PostgreSQL has ' +
      'committed; semantic indexing follows within seconds. Creating an id that was deleted ' +
      'brings the document back, its revision continuing.',
    parameters: [prefer],
    body: { schema: createSchema, required: true },
    responses: {
      201: {
        description: 'Created; `Location` and `ETag` headers',
        schema: 'WrittenDocument',
        links: linksById('document_id', {
          GetDocument: 'DocumentsController_get',
          UpdateDocument: 'DocumentsController_update',
          PatchDocument: 'DocumentsController_patch',
          MoveDocument: 'DocumentsController_move',
          DocumentHistory: 'DocumentsController_history',
          DocumentLinks: 'LinksController_outgoing',
          DocumentBacklinks: 'LinksController_backlinks',
          DocumentNeighbourhood: 'LinksController_neighbourhood',
          DeleteDocument: 'DocumentsController_remove',
          RestoreDocument: 'DocumentsController_restore',
        }),
      },
    },
    errors: {
      409: 'ALREADY_EXISTS: a document with this id is alive',
      413: 'TOO_LARGE: the body, metadata, title or tags exceed a limit (named in the message)',
      415: 'UNSUPPORTED_MEDIA_TYPE: the request body is not application/json',
    },
  },
  'POST /documents/bulk': {
    tag: 'Documents',
    idempotent: true,
    summary: 'Create, update and delete many documents',
    description:
      `Up to ${BULK_MAX_ITEMS} items, each \`{"op": "create" | "update" | "delete", "document_id", ...}\` ` +
      'with the fields of the single write it names (`expected_revision` makes an update or ' +
      'delete a compare-and-set). Each item is validated, checked against the access policy, ' +
      'audited and written as that single write would be; one refused item does not stop ' +
      'the others (partial success), and its result carries the status and error the single ' +
      'write would have answered. A database outage answers the items not yet written with ' +
      'UNAVAILABLE (503): send those again. With `Idempotency-Key` the items are written in one ' +
      'transaction with the stored answer: an outage rolls the whole request back and answers ' +
      '503, to be sent again with the same key.',
    parameters: [],
    body: { schema: bulkSchema, required: true },
    responses: { 200: { description: 'One result per item, in order', schema: 'BulkResult' } },
    errors: {
      413: 'TOO_LARGE: the request body exceeds MAX_REQUEST_BYTES',
      415: 'UNSUPPORTED_MEDIA_TYPE: the request body is not application/json',
    },
  },
  'GET /documents/changes': {
    tag: 'Documents',
    summary: 'Changes: the audit trail, newest first',
    description:
      'Every write as the audit trail records it (create, update, delete, restore, move, ' +
      'moved-away, purge, and refused:<operation> for a write the access policy refused), ' +
      'newest first by id, a page at a time: pass `next_cursor` back as `cursor` for the ' +
      'next, older page (rows written meanwhile shift nothing). Under an access policy only ' +
      'the rows of documents the caller may read. An empty filter is no filter.',
    parameters: [
      query(
        'folder',
        'Only documents under this folder, whole segments (`team-a`: `team-a/x.md`, not `team-ab/x.md`)',
        {
          type: 'string',
        },
      ),
      query(
        'actor',
        'Only the writes of this actor (an API key name or a token subject), exactly',
        {
          type: 'string',
        },
      ),
      query('operation', 'Only this operation, exactly; empty: any', {
        type: 'string',
        enum: ['', ...AUDITED_OPERATIONS],
      }),
      // An empty filter is no filter (`since=` as if absent), as for every filter of the feed.
      {
        ...query('since', 'ISO 8601 time with its offset: changes at or after it; empty: any', {
          type: 'string',
          format: 'date-time',
        }),
        allowEmptyValue: true,
      },
      {
        ...query(
          'until',
          'ISO 8601 time with its offset: changes before it (after `since`); empty: any',
          {
            type: 'string',
            format: 'date-time',
          },
        ),
        allowEmptyValue: true,
      },
      query('limit', `Page size, 1 to ${CHANGES_MAX_LIMIT}`, {
        type: 'integer',
        minimum: 1,
        maximum: CHANGES_MAX_LIMIT,
        default: CHANGES_DEFAULT_LIMIT,
      }),
      query('cursor', '`next_cursor` of the previous page', { type: 'string' }),
    ],
    responses: { 200: { description: 'One page of changes', schema: 'ChangeFeed' } },
  },
  'GET /documents/folders': {
    tag: 'Documents',
    summary: 'Folder tree: the subfolders of a folder, with their document counts',
    description:
      'The immediate subfolders of `parent` (the root when absent) that hold at least one ' +
      'alive document, each with the number of alive documents in its whole subtree, and ' +
      `the number directly in \`parent\`; the first ${FOLDER_TREE_MAX_FOLDERS} subfolders in byte ` +
      'order (`truncated` beyond). Under an access policy only readable documents are named ' +
      'or counted; a folder holding none does not appear.',
    parameters: [
      query('parent', 'The folder to list (`team-a/reports`); the root when absent or empty', {
        type: 'string',
      }),
    ],
    responses: { 200: { description: 'The subfolders and counts', schema: 'FolderTree' } },
  },
  'GET /documents/{id}': {
    tag: 'Documents',
    summary: 'Read a document',
    parameters: [idParameter, header('If-None-Match', 'Revision ETag; 304 when still current')],
    responses: {
      200: {
        description: 'The document, and the source that keeps it in sync; `ETag` is its revision',
        schema: 'ReadDocument',
      },
      304: { description: 'Not modified since the revision in If-None-Match' },
    },
    errors: { 404: 'NOT_FOUND: no alive document with this id' },
  },
  'PUT /documents/{id}': {
    tag: 'Documents',
    idempotent: true,
    summary: 'Update a document',
    description:
      'Replaces the given fields. With `expected_revision` (or If-Match) the write is a ' +
      'compare-and-set. An update that changes nothing keeps the revision (`changed: false`).',
    parameters: [idParameter, ifMatch, prefer],
    body: { schema: updateSchema, required: true },
    responses: { 200: { description: 'The document after the update', schema: 'WriteResult' } },
    errors: {
      404: 'NOT_FOUND: no alive document with this id',
      409: 'REVISION_CONFLICT: expected_revision is not the current revision (which is given)',
      412: 'REVISION_CONFLICT: If-Match is not the current revision',
      413: 'TOO_LARGE: a limit is exceeded',
      415: 'UNSUPPORTED_MEDIA_TYPE: the request body is not application/json',
    },
  },
  'PATCH /documents/{id}': {
    tag: 'Documents',
    idempotent: true,
    summary: 'Replace a string in a document',
    description:
      'Exactly one occurrence of `old_str` is replaced by `new_str` (`replace_all` replaces ' +
      'every one). The write is conditional on the revision that was read.',
    parameters: [idParameter, ifMatch, prefer],
    body: { schema: patchSchema, required: true },
    responses: { 200: { description: 'The document after the patch', schema: 'PatchResult' } },
    errors: {
      404: 'NOT_FOUND: no alive document with this id',
      409: 'PATCH_AMBIGUOUS (old_str occurs several times; the count is given) or REVISION_CONFLICT',
      412: 'REVISION_CONFLICT: If-Match is not the current revision',
      413: 'TOO_LARGE: the patched body exceeds the limit',
      415: 'UNSUPPORTED_MEDIA_TYPE: the request body is not application/json',
      422: 'PATCH_NO_MATCH: old_str does not occur',
    },
  },
  'DELETE /documents/{id}': {
    tag: 'Documents',
    idempotent: true,
    summary: 'Delete a document (soft)',
    description: 'The document leaves list, read and search; `restore` brings it back.',
    parameters: [idParameter, ifMatch],
    responses: { 200: { description: 'Deleted', schema: 'DeleteResult' } },
    errors: {
      404: 'NOT_FOUND: no alive document with this id',
      412: 'REVISION_CONFLICT: If-Match is not the current revision',
    },
  },
  'POST /documents/{id}/restore': {
    tag: 'Documents',
    idempotent: true,
    summary: 'Restore a deleted document, or an earlier revision',
    description:
      'Without `revision`, undeletes; with it, brings back that snapshot as a new revision.',
    parameters: [idParameter, prefer],
    body: { schema: restoreSchema, required: false },
    responses: { 200: { description: 'The restored document', schema: 'WriteResult' } },
    errors: { 404: 'NOT_FOUND: no such document or revision' },
  },
  'GET /documents/{id}/history': {
    tag: 'Documents',
    summary: 'List earlier versions of a document, or read one whole',
    description:
      'Without `revision`, a page of snapshots, newest first (sizes, not bodies); with ' +
      '`revision`, that earlier version whole (a `Revision`: body and metadata included).',
    parameters: [
      idParameter,
      ...page(100, 50),
      query('revision', 'Read this earlier version whole (not with limit or offset)', {
        type: 'integer',
        minimum: 1,
      }),
    ],
    responses: {
      200: { description: 'Snapshots, or the one revision', schema: 'HistoryOrRevision' },
    },
    errors: {
      400: 'INVALID_ARGUMENT: a bad limit, offset or revision',
      404: 'NOT_FOUND: no document with this id, or no saved revision of that number',
    },
  },
  'POST /documents/{id}/move': {
    tag: 'Documents',
    idempotent: true,
    summary: 'Move a document to a new id',
    description:
      'Atomically gives the document the id `to`, keeping its revision, its earlier versions ' +
      'and its audit trail; semantic indexing follows under the new id within seconds. With ' +
      '`expected_revision` (or If-Match) the move is a compare-and-set.',
    parameters: [idParameter, ifMatch, prefer],
    body: { schema: moveSchema, required: true },
    responses: {
      200: {
        description: 'The moved document; `Location` is its new URL',
        schema: 'WrittenDocument',
      },
    },
    errors: {
      404: 'NOT_FOUND: no alive document with this id',
      409: 'ALREADY_EXISTS: a document (alive or deleted) holds `to`; or REVISION_CONFLICT',
      412: 'REVISION_CONFLICT: If-Match is not the current revision',
      415: 'UNSUPPORTED_MEDIA_TYPE: the request body is not application/json',
    },
  },
  'GET /search': {
    tag: 'Search',
    summary: 'Hybrid search',
    description:
      'The search service behind the `search_knowledge` MCP tool: BM25 over documents and ' +
      'their best passages fused with the vector ranking (normalised scores); the best ' +
      'passage per alive document. Recent writes appear once chunked (milliseconds) and ' +
      'embedded (seconds).',
    parameters: [
      query(
        'query',
        'What to look for: words, identifiers or a question',
        { type: 'string' },
        true,
      ),
      query('mode', 'hybrid (both rankings), lexical or vector', {
        type: 'string',
        enum: ['hybrid', 'lexical', 'vector'],
        default: 'hybrid',
      }),
      query('limit', 'Results, 1 to 50', { type: 'integer', minimum: 1, maximum: 50, default: 10 }),
      query('prefix', 'Only documents whose id starts with it', { type: 'string' }),
      {
        ...query(
          'tags',
          'Only documents with every tag (repeat the parameter or separate by commas)',
          {
            type: 'array',
            items: { type: 'string' },
          },
        ),
        style: 'form',
        explode: true,
      },
    ],
    responses: { 200: { description: 'Hits, best first', schema: 'SearchResponse' } },
    errors: {
      502: 'UPSTREAM_ERROR: mode=vector, and the embedder or the vector store failed (hybrid answers from the lexical side instead, with `degraded: true`)',
    },
  },
  'GET /admin/vectors/status': {
    tag: 'Vectors',
    summary: 'Vector sync status',
    description:
      'Documents per vector status, lag, listener and worker state, embedder and store, latest errors.',
    responses: { 200: { description: 'Status', schema: 'VectorsStatus' } },
  },
  'POST /admin/vectors/reindex': {
    tag: 'Vectors',
    summary: 'Re-embed every document, or those under a prefix',
    description:
      'Queues the documents for embedding again (after changing the embedding model, or ' +
      'restoring the vector store). The work happens in the background.',
    body: { schema: reindexSchema, required: false },
    responses: { 202: { description: 'Queued', schema: 'ReindexResult' } },
    errors: { 415: 'UNSUPPORTED_MEDIA_TYPE: the request body is not application/json' },
  },
  ...LINKS_API_OPERATIONS,
  ...SOURCES_API_OPERATIONS,
  ...BACKUP_API_OPERATIONS,
  'GET /health/live': {
    tag: 'Operations',
    summary: 'Liveness: the process serves HTTP',
    public: true,
    responses: { 200: { description: 'Alive', schema: 'Live' } },
  },
  'GET /health/ready': {
    tag: 'Operations',
    summary: 'Readiness: PostgreSQL reachable, migrations applied, listener up',
    public: true,
    responses: {
      200: { description: 'Ready', schema: 'Ready' },
      503: { description: 'A required part is down; `checks` says which', schema: 'Ready' },
    },
  },
  'GET /metrics': {
    tag: 'Operations',
    summary: 'Prometheus metrics (text exposition format)',
    public: true,
    responses: { 200: { description: 'Metrics', text: true } },
  },
};
