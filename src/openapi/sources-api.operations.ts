import type { ParameterObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { sourceDeclarationSchema } from '../sources/source-declaration';
import { linksById, type OperationDoc, query } from './operation-doc';

const sourceId: ParameterObject = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The source, as declared (`handbook`)',
  schema: { type: 'string' },
};

const notFound = 'NOT_FOUND: no source with this id';

/** The declaring routes answer 403 for another reason than the admin profile too. */
const declaredInFile =
  'FORBIDDEN: the key or token does not grant the admin profile; PERMISSION_DENIED: SOURCES_FILE is set, and sources are declared there';

const notJson = 'UNSUPPORTED_MEDIA_TYPE: the request body is not application/json';

const declarationBody = (required: boolean) => ({ schema: sourceDeclarationSchema, required });

/** The `/sources` operations of the admin REST API. */
export const SOURCES_API_OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'GET /sources': {
    tag: 'Sources',
    summary: 'List the sources and where each stands',
    description:
      'Every declared source with its state, its documents, its next scheduled run and its ' +
      'last run; and the sources file (SOURCES_FILE) with why it was last refused, if it was.',
    responses: { 200: { description: 'The sources, by id', schema: 'SourceList' } },
    errors: { 400: 'INVALID_ARGUMENT: a query parameter (the route takes none)' },
  },
  'POST /sources': {
    tag: 'Sources',
    summary: 'Declare a source',
    description:
      'A folder of this machine, a git repository or a web site, kept in sync with the folder ' +
      '`mount` of the knowledge base; its first run follows at once. Only when SOURCES_FILE ' +
      'is not set: otherwise the file declares every source.',
    body: declarationBody(true),
    responses: {
      201: {
        description: 'Declared',
        schema: 'Source',
        links: linksById('id', {
          GetSource: 'SourcesController_get',
          ReplaceSource: 'SourcesController_replace',
          SourceRuns: 'SourcesController_runs',
          SyncSource: 'SourcesController_sync',
          DeleteSource: 'SourcesController_remove',
        }),
      },
    },
    errors: {
      400: 'INVALID_ARGUMENT: the declaration is invalid, or its mount overlaps the mount of another source (`error.field` names the field)',
      403: declaredInFile,
      409: 'ALREADY_EXISTS: a source has this id',
      415: notJson,
    },
  },
  'GET /sources/{id}': {
    tag: 'Sources',
    summary: 'Read a source',
    parameters: [sourceId],
    responses: { 200: { description: 'The source', schema: 'Source' } },
    errors: { 404: notFound },
  },
  'PUT /sources/{id}': {
    tag: 'Sources',
    summary: 'Change a source',
    description:
      'Replaces the declaration whole; its id and its mount stay. A changed declaration lists ' +
      'the source afresh at once, its failures forgotten. Only when SOURCES_FILE is not set.',
    parameters: [sourceId],
    body: declarationBody(true),
    responses: { 200: { description: 'The source as declared now', schema: 'Source' } },
    errors: {
      400: "INVALID_ARGUMENT: the declaration is invalid, its id is not the path's, or its mount changed",
      403: declaredInFile,
      404: notFound,
      415: notJson,
    },
  },
  'DELETE /sources/{id}': {
    tag: 'Sources',
    summary: 'Remove a source and the documents it wrote',
    description:
      'Its run, if one is queued or running, is cancelled; its documents are deleted (softly: ' +
      'each can be restored); the documents agents wrote under its mount stay. Only when ' +
      'SOURCES_FILE is not set: otherwise, take it out of the file.',
    parameters: [sourceId],
    responses: { 204: { description: 'Removed' } },
    errors: { 403: declaredInFile, 404: notFound },
  },
  'GET /sources/{id}/runs': {
    tag: 'Sources',
    summary: "A source's runs, newest first",
    parameters: [
      sourceId,
      query('limit', 'Runs, 1 to 200', { type: 'integer', minimum: 1, maximum: 200, default: 20 }),
      query('before', 'Only runs older than this one (the `id` of the last run of a page)', {
        type: 'string',
        pattern: '^[0-9]{1,18}$',
      }),
    ],
    responses: { 200: { description: 'Runs', schema: 'SourceRuns' } },
    errors: { 404: notFound },
  },
  'POST /sources/{id}/sync': {
    tag: 'Sources',
    summary: 'Sync a source now',
    description:
      'Queues a run, or answers the run already queued or running (a source has one at a ' +
      'time): poll `GET /sources/{id}/runs` until its status is no longer queued or running. ' +
      'A run deletes at most `max_delete` of the documents (25 % by default) unless ' +
      '`confirm_deletions=true`; beyond that it holds the deletions and says so in its message.',
    parameters: [
      sourceId,
      query('confirm_deletions', 'Make the deletions beyond max_delete too', {
        type: 'boolean',
        default: false,
      }),
    ],
    responses: { 202: { description: 'The run that will happen', schema: 'SourceRun' } },
    errors: { 404: notFound },
  },
};
