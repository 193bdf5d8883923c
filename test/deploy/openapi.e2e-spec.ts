import request from 'supertest';
import { DocumentsController } from '../../src/documents/documents.controller';
import { IdempotencyInterceptor } from '../../src/idempotency/idempotency.interceptor';
import { ADMIN_API_OPERATIONS } from '../../src/openapi/admin-api.operations';
import { startTestApp, TestApp } from '../support/app';

interface Operation {
  summary?: string;
  parameters?: { name: string; in: string; required?: boolean }[];
  tags?: string[];
  requestBody?: {
    content: Record<
      string,
      { schema: { properties?: Record<string, unknown>; oneOf?: { properties: object }[] } }
    >;
  };
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
  security?: unknown[];
}
type OpenApi = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

/**
 * The admin REST routes (docs/documents.md, search.md, operations.md, and the sources), as
 * OpenAPI writes them.
 */
const ADMIN_ROUTES = [
  'GET /documents',
  'POST /documents',
  'GET /documents/changes',
  'GET /documents/folders',
  'GET /documents/{id}',
  'PUT /documents/{id}',
  'PATCH /documents/{id}',
  'DELETE /documents/{id}',
  'POST /documents/{id}/restore',
  'GET /documents/{id}/history',
  'POST /documents/{id}/move',
  'GET /search',
  'GET /admin/vectors/status',
  'POST /admin/vectors/reindex',
  'GET /sources',
  'POST /sources',
  'GET /sources/{id}',
  'PUT /sources/{id}',
  'DELETE /sources/{id}',
  'GET /sources/{id}/runs',
  'POST /sources/{id}/sync',
  'GET /admin/backup',
  'POST /admin/restore',
  'GET /health/live',
  'GET /health/ready',
  'GET /metrics',
];

const MCP = /^\/((gpt-)?mcp|readonly\/|gpt\/|gpt-full\/)/;

describe('OpenAPI document of the admin API (/docs-json)', () => {
  let t: TestApp;
  let spec: OpenApi;
  /** `METHOD /path` of every controller route the application serves (Express's router). */
  let served: string[];

  beforeAll(async () => {
    t = await startTestApp();
    spec = (await request(t.baseUrl).get('/docs-json').expect(200)).body as OpenApi;
    const router = (
      t.app.getHttpAdapter().getInstance() as {
        router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] };
      }
    ).router;
    // A controller route is one method on one path; middleware bound with
    // `forRoutes(RequestMethod.ALL)` shows up as a path carrying every method.
    served = router.stack.flatMap((layer) => {
      const methods = Object.keys(layer.route?.methods ?? {});
      return methods.length === 1
        ? [`${methods[0].toUpperCase()} ${openApiPath(layer.route!.path)}`]
        : [];
    });
  });
  afterAll(() => t.close());

  /** `/documents/*id/history` → `/documents/{id}/history`; `:id` → `{id}`. */
  function openApiPath(path: string): string {
    return path.replace(/[*:](\w+)/g, '{$1}');
  }

  const documented = () =>
    Object.entries(spec.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );

  it('is served as OpenAPI 3 JSON, with the Swagger UI at /docs', async () => {
    expect(spec.openapi).toMatch(/^3\./);
    const ui = await request(t.baseUrl).get('/docs').redirects(1).expect(200);
    expect(ui.text).toContain('swagger-ui');
  });

  it('lists every admin route, wildcard ids as {id}', () => {
    expect(ADMIN_ROUTES.filter((route) => !documented().includes(route))).toEqual([]);
  });

  it('lists every non-MCP route the application serves, and only those', () => {
    const admin = served.filter((route) => {
      const path = route.split(' ')[1];
      // Protocol documents (RFC 9728, for OAuth clients) are not the admin API, like MCP; nor
      // are the pages of the Swagger UI and of the operator console (a client of the API).
      return (
        !MCP.test(path) &&
        !/^\/docs/.test(path) &&
        !/^\/\.well-known\//.test(path) &&
        !/^\/console(\/|$)/.test(path)
      );
    });
    expect(admin.length).toBeGreaterThanOrEqual(ADMIN_ROUTES.length);
    expect(admin.filter((route) => !documented().includes(route))).toEqual([]);
    expect(documented().filter((route) => !admin.includes(route))).toEqual([]);
    expect(Object.keys(spec.paths).filter((path) => MCP.test(path))).toEqual([]);
  });

  it('describes each operation: summary, id parameter, answers, errors, key', () => {
    expect(Object.keys(ADMIN_API_OPERATIONS).sort()).toEqual(documented().sort());
    for (const route of documented()) {
      const [method, path] = route.split(' ');
      const operation = spec.paths[path][method.toLowerCase()];
      expect({ route, summary: operation.summary }).toEqual({ route, summary: expect.any(String) });
      if (path.includes('{id}')) {
        expect(operation.parameters).toContainEqual(
          expect.objectContaining({ name: 'id', in: 'path', required: true }),
        );
      }
      const statuses = Object.keys(operation.responses).map(Number);
      expect({ route, answers: statuses.some((s) => s < 300 || s === 501) }).toEqual({
        route,
        answers: true,
      });
      const isPublic = /^\/(health|metrics)/.test(path);
      expect({ route, security: operation.security }).toEqual({
        route,
        security: isPublic ? [] : [{ apiKey: [] }, { bearer: [] }],
      });
      if (!isPublic) {
        for (const status of ['401', '403']) {
          expect(operation.responses[status].content!['application/json'].schema.$ref).toBe(
            '#/components/schemas/Error',
          );
        }
      }
    }
    expect(spec.components.securitySchemes).toEqual({
      apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
  });

  it('declares Idempotency-Key on every write under /documents, with its 409 and 422', () => {
    const writes = documented().filter((route) =>
      /^(POST|PUT|PATCH|DELETE) \/documents/.test(route),
    );
    expect(writes).toHaveLength(7);
    for (const route of writes) {
      const [method, path] = route.split(' ');
      const operation = spec.paths[path][method.toLowerCase()] as Operation & {
        responses: Record<string, { description: string; headers?: Record<string, unknown> }>;
      };
      expect({ route, parameters: operation.parameters }).toEqual({
        route,
        parameters: expect.arrayContaining([
          expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }),
        ]),
      });
      expect(operation.responses['409'].description).toContain('IDEMPOTENCY_KEY_IN_USE');
      expect(operation.responses['422'].description).toContain('IDEMPOTENCY_KEY_REUSED');
      const success = Object.keys(operation.responses).find((status) => Number(status) < 300)!;
      expect(operation.responses[success].headers).toHaveProperty('Idempotent-Replayed');
    }
    // Each of those routes runs through the interceptor that honours the header.
    const handlers = Object.getOwnPropertyNames(DocumentsController.prototype).filter((name) =>
      ['create', 'bulk', 'update', 'patch', 'remove', 'restore', 'move'].includes(name),
    );
    expect(handlers).toHaveLength(7);
    for (const name of handlers) {
      const handler = (DocumentsController.prototype as unknown as Record<string, object>)[name];
      expect({ name, interceptors: Reflect.getMetadata('__interceptors__', handler) }).toEqual({
        name,
        interceptors: [IdempotencyInterceptor],
      });
    }
  });

  it('documents request bodies from the zod schemas the controllers validate with', () => {
    const body = (route: string) => {
      const [method, path] = route.split(' ');
      return spec.paths[path][method.toLowerCase()].requestBody!.content['application/json'].schema;
    };
    expect(Object.keys(body('POST /documents').properties!).sort()).toEqual(
      ['body', 'content', 'document_id', 'metadata', 'path', 'tags', 'title'].sort(),
    );
    expect(body('PATCH /documents/{id}')).toMatchObject({
      required: ['old_str', 'new_str'],
      additionalProperties: false,
    });
    expect(body('PUT /documents/{id}').properties).toHaveProperty('expected_revision');
    expect(body('POST /admin/vectors/reindex').properties).toHaveProperty('prefix');
    // A source's declaration is one of three kinds, each with its own fields.
    for (const route of ['POST /sources', 'PUT /sources/{id}']) {
      expect(body(route).oneOf!.map((kind) => kind.properties)).toEqual([
        expect.objectContaining({
          kind: { type: 'string', enum: ['folder'] },
          path: expect.anything(),
        }),
        expect.objectContaining({
          kind: { type: 'string', enum: ['git'] },
          ref: expect.anything(),
        }),
        expect.objectContaining({
          kind: { type: 'string', enum: ['web'] },
          max_pages: expect.anything(),
        }),
      ]);
    }
  });

  it('groups the sources under their tag, with what each answers', () => {
    const sources = documented().filter((route) => route.includes(' /sources'));
    expect(sources).toHaveLength(7);
    for (const route of sources) {
      const [method, path] = route.split(' ');
      expect({ route, tags: spec.paths[path][method.toLowerCase()].tags }).toEqual({
        route,
        tags: ['Sources'],
      });
    }
    const answer = (route: string, status: number) => {
      const [method, path] = route.split(' ');
      return spec.paths[path][method.toLowerCase()].responses[status].content?.['application/json']
        .schema.$ref;
    };
    expect(answer('GET /sources', 200)).toBe('#/components/schemas/SourceList');
    expect(answer('GET /sources/{id}', 200)).toBe('#/components/schemas/Source');
    expect(answer('POST /sources', 201)).toBe('#/components/schemas/Source');
    expect(answer('GET /sources/{id}/runs', 200)).toBe('#/components/schemas/SourceRuns');
    expect(answer('POST /sources/{id}/sync', 202)).toBe('#/components/schemas/SourceRun');
    expect(answer('GET /sources/{id}', 404)).toBe('#/components/schemas/Error');
    expect(answer('POST /sources', 409)).toBe('#/components/schemas/Error');
    expect(spec.paths['/sources/{id}'].delete.responses['204']).toEqual({ description: 'Removed' });
    expect(spec.components.schemas.SourceDeclaration).toMatchObject({
      oneOf: [expect.any(Object), expect.any(Object), expect.any(Object)],
    });
  });

  it('refers only to schemas it defines, and answers errors with the Error shape', async () => {
    const refs = [...JSON.stringify(spec.paths).matchAll(/"#\/components\/schemas\/(\w+)"/g)].map(
      (m) => m[1],
    );
    expect(refs.filter((name) => !(name in spec.components.schemas))).toEqual([]);
    // The documented error shape is the one the API answers with.
    const answer = await request(t.baseUrl).get('/documents/nope/missing.md').expect(404);
    expect(Object.keys(answer.body)).toEqual(['error']);
    expect(answer.body.error).toMatchObject({ code: 'NOT_FOUND', message: expect.any(String) });
    expect(spec.components.schemas.Error).toMatchObject({
      properties: { error: { required: ['code', 'message'] } },
    });
  });
});
