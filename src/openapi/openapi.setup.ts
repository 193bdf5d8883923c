import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type {
  OperationObject,
  PathItemObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { z } from 'zod';
import { SERVER_VERSION } from '../common/version';
import { ADMIN_API_OPERATIONS } from './admin-api.operations';
import { RESPONSE_SCHEMAS } from './openapi.schemas';
import { header, type OperationDoc } from './operation-doc';

/** The MCP routes speak JSON-RPC over Streamable HTTP; docs/mcp.md documents them, not OpenAPI. */
const MCP_PATH = /^\/((gpt-)?mcp|readonly\/|gpt\/|gpt-full\/)/;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** Request and answer schemas come from zod, in the dialect OpenAPI 3.0 understands. */
function toOpenApi(schema: z.ZodType, io: 'input' | 'output'): SchemaObject {
  return z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io,
    unrepresentable: 'any',
  }) as SchemaObject;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const IDEMPOTENCY_KEY = header(
  'Idempotency-Key',
  '1 to 255 printable ASCII characters, a new one (a UUID) per write: the write runs once, ' +
    'and a retry with the same key and the same request gets its first answer again ' +
    '(status, body, `ETag`, `Location`) with `Idempotent-Replayed: true`, on any replica, ' +
    'for 24 hours. See "Retrying writes safely" in docs/documents.md',
);

const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    description:
      '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** The answers an idempotent write adds, beside those of its own (joined to them). */
const IDEMPOTENCY_ERRORS: Readonly<Record<number, string>> = {
  409: 'IDEMPOTENCY_KEY_IN_USE: the first request with this Idempotency-Key is still running; retry after `Retry-After` (1) seconds for its answer',
  422: 'IDEMPOTENCY_KEY_REUSED: this Idempotency-Key was used for another request (method, path, body, If-Match or Prefer differ)',
};

function withIdempotency(errors: Record<string, string>): Record<string, string> {
  const joined = { ...errors };
  for (const [status, description] of Object.entries(IDEMPOTENCY_ERRORS)) {
    joined[status] =
      joined[status] === undefined ? description : `${joined[status]}; ${description}`;
  }
  return joined;
}

function describe(operation: OperationObject, doc: OperationDoc, method: string): OperationObject {
  const responses: Record<string, ResponseObject> = {};
  for (const [status, answer] of Object.entries(doc.responses)) {
    responses[status] = {
      description: answer.description,
      ...(answer.links && { links: answer.links }),
      ...(doc.idempotent && { headers: REPLAYED_HEADER }),
      ...(answer.text
        ? { content: { 'text/plain': { schema: { type: 'string' } } } }
        : answer.binary
          ? { content: { [answer.binary]: { schema: { type: 'string', format: 'binary' } } } }
          : answer.schema && {
              content: { 'application/json': { schema: ref(answer.schema) } },
            }),
    };
  }
  const errors: Record<string, string> = {
    ...(doc.parameters?.length || doc.body || doc.binaryBody
      ? { 400: 'INVALID_ARGUMENT: a parameter or field is invalid (`error.field` names it)' }
      : {}),
    ...(doc.public
      ? {}
      : {
          401: 'UNAUTHENTICATED: no API key or access token, or one that is not valid (`WWW-Authenticate` is set; with OAuth it names the scope and the resource metadata)',
          403: 'FORBIDDEN: the key or token does not grant the admin profile (`insufficient_scope` with the scope needed); PERMISSION_DENIED: a write to a document the access policy lets the caller read but not change (a document outside its read grants is 404, as an absent one)',
          ...(method === 'get'
            ? {}
            : {
                429: 'RATE_LIMITED: the principal is over RATE_LIMIT_ADMIN_WRITES; retry after `Retry-After` seconds',
              }),
          503: 'UNAVAILABLE: PostgreSQL is not reachable, or the access token cannot be checked right now; retry after `Retry-After` seconds',
        }),
    ...doc.errors,
  };
  for (const [status, description] of Object.entries(
    doc.idempotent ? withIdempotency(errors) : errors,
  )) {
    responses[status] = { description, content: { 'application/json': { schema: ref('Error') } } };
  }
  return {
    operationId: operation.operationId,
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description && { description: doc.description }),
    parameters: [...(doc.parameters ?? []), ...(doc.idempotent ? [IDEMPOTENCY_KEY] : [])],
    ...(doc.body && {
      requestBody: {
        required: doc.body.required,
        content: { 'application/json': { schema: toOpenApi(doc.body.schema, 'input') } },
      },
    }),
    ...(doc.binaryBody && {
      requestBody: {
        required: true,
        description: doc.binaryBody.description,
        content: { [doc.binaryBody.mediaType]: { schema: { type: 'string', format: 'binary' } } },
      },
    }),
    responses,
    security: doc.public ? [] : [{ apiKey: [] }, { bearer: [] }],
  };
}

/**
 * The OpenAPI document of the admin REST API: the routes Nest knows, minus the MCP ones,
 * each described by its entry in {@link ADMIN_API_OPERATIONS} (a route without one keeps
 * Nest's bare description, and the OpenAPI test fails).
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Agent Data admin API')
    .setDescription(
      'Documents, semantic search, vector sync administration and the sources kept in sync ' +
        'with folders of the knowledge base. Every route except ' +
        '`/health/*` and `/metrics` needs an API key with the `admin` profile, in `X-API-Key` ' +
        'or `Authorization: Bearer`. Errors are `{"error": {"code", "message", ...}}`. ' +
        'Agents use the MCP endpoints (`/mcp`, `/readonly/mcp`, `/gpt/mcp`, `/gpt-full/mcp`) ' +
        'instead, described in docs/mcp.md.',
    )
    .setVersion(SERVER_VERSION)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key' }, 'apiKey')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'The API key as a bearer token' },
      'bearer',
    )
    .addTag('Documents', 'Markdown documents addressed by path-like ids')
    .addTag('Search', 'Semantic search over the documents')
    .addTag('Vectors', 'The embedding pipeline')
    .addTag('Sources', 'Folders, git repositories and web sites kept in sync with a folder')
    .addTag('Backup', 'A backup of the knowledge base, and its restore into an empty one')
    .addTag('Operations', 'Probes and metrics (no API key)')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  const paths: Record<string, PathItemObject> = {};
  for (const [path, item] of Object.entries(document.paths)) {
    if (MCP_PATH.test(path)) continue;
    const described: PathItemObject = {};
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const doc = ADMIN_API_OPERATIONS[`${method.toUpperCase()} ${path}`];
      described[method] = doc ? describe(operation, doc, method) : operation;
    }
    paths[path] = described;
  }
  document.paths = paths;
  document.components = {
    ...document.components,
    schemas: Object.fromEntries(
      Object.entries(RESPONSE_SCHEMAS).map(([name, schema]) => [name, toOpenApi(schema, 'output')]),
    ),
  };
  return document;
}

/** Serves the Swagger UI at `/docs` and the document at `/docs-json`, built on first use. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    customSiteTitle: 'Agent Data admin API',
  });
}
