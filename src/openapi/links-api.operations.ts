import type { ParameterObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import {
  BACKLINKS_DEFAULT_LIMIT,
  BACKLINKS_MAX_LIMIT,
  BROKEN_DEFAULT_LIMIT,
  BROKEN_MAX_LIMIT,
  NEIGHBOURHOOD_DEFAULT_LIMIT,
  NEIGHBOURHOOD_MAX_DEPTH,
  NEIGHBOURHOOD_MAX_LIMIT,
} from '../documents/links.service';
import { type OperationDoc, query } from './operation-doc';

const idParameter: ParameterObject = {
  name: 'id',
  in: 'path',
  required: true,
  description:
    'Document id, slashes included. An id whose segment holds a literal `/` is sent with that ' +
    'slash as `%2F`.',
  schema: { type: 'string' },
};

const limit = (max: number, fallback: number, what: string) =>
  query('limit', `${what}, 1 to ${max}`, {
    type: 'integer',
    minimum: 1,
    maximum: max,
    default: fallback,
  });

const cursor = query('cursor', '`next_cursor` of the previous page', { type: 'string' });

const access =
  'Under an access policy a document the caller may not read is never named or counted: a ' +
  'link to it reads as a link to no document.';

/** Links between documents (docs/documents.md, "Links between documents"). */
export const LINKS_API_OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'GET /documents/links/broken': {
    tag: 'Documents',
    summary: 'Broken links under a folder',
    description:
      'The links that resolve to no document, in the documents whose id starts with `prefix` ' +
      '(any text, as listings take it), by document in byte order of id: up to 200 documents ' +
      `with links are read a page, and at most \`limit\` broken links given (a document's are ` +
      `never split). Pass \`next_cursor\` back as \`cursor\` for the next page. ${access}`,
    parameters: [
      query('prefix', 'Id prefix; the whole knowledge base when absent', { type: 'string' }),
      limit(BROKEN_MAX_LIMIT, BROKEN_DEFAULT_LIMIT, 'Broken links a page'),
      cursor,
    ],
    responses: { 200: { description: 'A page of broken links', schema: 'BrokenLinks' } },
    errors: { 400: 'INVALID_ARGUMENT: a bad prefix, limit or cursor' },
  },
  'GET /documents/{id}/links': {
    tag: 'Documents',
    summary: 'A document’s links, resolved',
    description:
      'Every link of the body (markdown links, `[[wikilinks]]`, `kb://` URIs; not in code), ' +
      'in order, each with the document it resolves to now, or `null`: a broken link. Offsets ' +
      `are in UTF-16 code units. ${access}`,
    parameters: [idParameter],
    responses: { 200: { description: 'The links', schema: 'DocumentLinks' } },
    errors: { 404: 'NOT_FOUND: no alive document with this id' },
  },
  'GET /documents/{id}/backlinks': {
    tag: 'Documents',
    summary: 'The documents linking to a document',
    description:
      'The alive documents whose links resolve to this one, in byte order of id, with the ' +
      'passage of their first such link, a page at a time (pass `next_cursor` back as ' +
      `\`cursor\`). ${access}`,
    parameters: [
      idParameter,
      limit(BACKLINKS_MAX_LIMIT, BACKLINKS_DEFAULT_LIMIT, 'Page size'),
      cursor,
    ],
    responses: { 200: { description: 'A page of backlinks', schema: 'Backlinks' } },
    errors: {
      400: 'INVALID_ARGUMENT: a bad limit or cursor',
      404: 'NOT_FOUND: no alive document with this id',
    },
  },
  'GET /documents/{id}/neighbourhood': {
    tag: 'Documents',
    summary: 'A document’s neighbourhood: what it links to and what links to it',
    description:
      `The documents up to \`depth\` links away (1 to ${NEIGHBOURHOOD_MAX_DEPTH}), either way, ` +
      'nearest first, at most `limit`, each with the link it was reached by, and the links ' +
      `found between them (for a graph). The walk never passes through a document the caller may not read. ${access}`,
    parameters: [
      idParameter,
      query('depth', `Links away, 1 to ${NEIGHBOURHOOD_MAX_DEPTH}`, {
        type: 'integer',
        minimum: 1,
        maximum: NEIGHBOURHOOD_MAX_DEPTH,
        default: 1,
      }),
      limit(NEIGHBOURHOOD_MAX_LIMIT, NEIGHBOURHOOD_DEFAULT_LIMIT, 'Documents at most'),
    ],
    responses: { 200: { description: 'The neighbourhood', schema: 'Neighbourhood' } },
    errors: {
      400: 'INVALID_ARGUMENT: a bad depth or limit',
      404: 'NOT_FOUND: no alive document with this id',
    },
  },
};
