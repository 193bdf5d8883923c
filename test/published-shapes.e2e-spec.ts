import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import { startTestApp, TestApp } from './support/app';
import { callsFor } from './support/mcp-calls';
import { ALL_TOOLS } from './support/mcp-expected';
import { type Json, post, rpc, send } from './support/mcp-http';
import { modernPost } from './support/mcp-modern';
import { page, PageServer, startPageServer } from './support/mcp-page-server';
import { sourceRunEnded } from './support/source-runs';
import { waitFor } from './support/wait';

const KEY = 'shapes-key-0123456789abcdef';
const HEADERS = { 'X-API-Key': KEY };
const WRITE = { ...HEADERS, 'Content-Type': 'application/json' };

/**
 * A copy of `schema` where an object with properties that does not say whether it admits
 * others admits none: an answer may carry more than its schema names only where the schema
 * says so (`additionalProperties`), whichever way the schema was generated.
 */
function closed(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, closed(value)]),
  );
  if (copy.type === 'object' && copy.properties && !('additionalProperties' in copy)) {
    copy.additionalProperties = false;
  }
  return copy;
}

/**
 * The shapes the server publishes are the shapes it answers: every admin REST answer below
 * (success and error) is checked against the response schema its operation names in
 * `/docs-json`, and every tool's `structuredContent` against the `outputSchema` that
 * `tools/list` gives, in both protocol eras. A shape that drifts from its description
 * (document.schemas.ts, search.schemas.ts, vectors-admin.schemas.ts, sources.schemas.ts,
 * health.schemas.ts, openapi.schemas.ts, the tools) fails here.
 */
describe('published shapes', () => {
  let t: TestApp;
  let pages: PageServer;
  let spec: Json;
  /** The folder a source reads: removed once the server has stopped watching it. */
  let folder: string;
  // zod writes `format: uri` for a URL (a web source's `url`).
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    formats: { uri: (text: string) => URL.canParse(text) },
  });

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'agent-data-shapes-source-'));
    pages = await startPageServer({
      '/guide.html': page('text/html', '<html><title>Guide</title><h1>Guide</h1><p>Hi.</p></html>'),
    });
    t = await startTestApp({
      API_KEYS: `shapes:${KEY}:admin,internal`,
      VECTOR_SYNC_ENABLED: 'true',
      INGEST_ALLOWED_HOSTS: '127.0.0.1',
      INGEST_ALLOW_HTTP: 'true',
      INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
    });
    spec = (await send(t.baseUrl, { path: '/docs-json' })).body;
    ajv.addSchema({ components: closed(spec.components) }, 'openapi');
  });
  afterAll(async () => {
    await t.close();
    await pages.close();
    await rm(folder, { recursive: true, force: true });
  });

  /** The validator of the JSON answer `status` of `method path` (an OpenAPI path template). */
  function answerSchema(method: string, path: string, status: number): ValidateFunction {
    const answer = spec.paths[path]?.[method.toLowerCase()]?.responses?.[status];
    const schema = answer?.content?.['application/json']?.schema;
    if (!schema) throw new Error(`${method} ${path} publishes no JSON answer for ${status}`);
    const ref: string = schema.$ref;
    return ajv.getSchema(`openapi${ref}`)!;
  }

  /** Sends a REST request and checks its answer against the published schema. */
  async function rest(
    template: string,
    request: { method?: string; path: string; headers?: Record<string, string>; body?: unknown },
  ) {
    const method = request.method ?? 'GET';
    const answer = await send(t.baseUrl, { headers: HEADERS, ...request, method });
    const validate = answerSchema(method, template, answer.status);
    expect({
      route: `${method} ${template} ${answer.status}`,
      errors: validate(answer.body) ? null : validate.errors,
    }).toEqual({
      route: `${method} ${template} ${answer.status}`,
      errors: null,
    });
    return answer;
  }

  it('every admin REST answer matches its published schema', async () => {
    const created = await rest('/documents', {
      method: 'POST',
      path: '/documents',
      headers: WRITE,
      body: {
        document_id: 'shapes/a.md',
        body: '# A\n\nrelease checklist',
        tags: ['x'],
        metadata: { k: 1 },
      },
    });
    expect(created.status).toBe(201);
    const minimal = await rest('/documents', {
      method: 'POST',
      path: '/documents',
      headers: { ...WRITE, Prefer: 'return=minimal' },
      body: { document_id: 'shapes/b.md', body: '# B' },
    });
    expect(minimal.body.body).toBeUndefined();
    await rest('/documents/{id}', { path: '/documents/shapes/a.md' });
    await rest('/documents', { path: '/documents?prefix=shapes/&limit=1' });
    await rest('/documents/{id}', {
      method: 'PUT',
      path: '/documents/shapes/a.md',
      headers: WRITE,
      body: { body: '# A\n\nrelease checklist, second', expected_revision: 1 },
    });
    await rest('/documents/{id}', {
      method: 'PATCH',
      path: '/documents/shapes/a.md',
      headers: WRITE,
      body: { old_str: 'second', new_str: 'third' },
    });
    await rest('/documents/{id}/history', { path: '/documents/shapes/a.md/history' });
    await rest('/documents/{id}/history', { path: '/documents/shapes/a.md/history?revision=1' });
    // Links, with a link that resolves, one that does not, and a backlink.
    await rest('/documents', {
      method: 'POST',
      path: '/documents',
      headers: WRITE,
      body: {
        document_id: 'shapes/links.md',
        body: 'To [A](a.md), [[missing]] and kb://shapes/a.md',
      },
    });
    await rest('/documents/{id}/links', { path: '/documents/shapes/links.md/links' });
    await rest('/documents/{id}/backlinks', { path: '/documents/shapes/a.md/backlinks?limit=1' });
    await rest('/documents/{id}/neighbourhood', {
      path: '/documents/shapes/a.md/neighbourhood?depth=2',
    });
    await rest('/documents/links/broken', { path: '/documents/links/broken?prefix=shapes/' });
    await rest('/documents/folders', { path: '/documents/folders' });
    await rest('/documents/folders', { path: '/documents/folders?parent=shapes' });
    const changes = await rest('/documents/changes', { path: '/documents/changes?limit=2' });
    await rest('/documents/changes', {
      path: `/documents/changes?folder=shapes&cursor=${changes.body.next_cursor}`,
    });
    await rest('/documents/{id}', { method: 'DELETE', path: '/documents/shapes/b.md' });
    await rest('/documents/{id}/restore', {
      method: 'POST',
      path: '/documents/shapes/b.md/restore',
    });
    await rest('/documents/{id}/restore', {
      method: 'POST',
      path: '/documents/shapes/a.md/restore',
      headers: WRITE,
      body: { revision: 1 },
    });
    await waitFor(
      async () =>
        (await send(t.baseUrl, { path: '/search?query=checklist', headers: HEADERS })).body.results
          ?.length > 0,
      'the documents to be searchable',
    );
    await rest('/search', { path: '/search?query=release+checklist&limit=3' });
    await rest('/admin/vectors/status', { path: '/admin/vectors/status' });
    await rest('/admin/vectors/reindex', {
      method: 'POST',
      path: '/admin/vectors/reindex',
      headers: WRITE,
      body: { prefix: 'shapes/' },
    });
    await rest('/health/live', { path: '/health/live' });
    await rest('/health/ready', { path: '/health/ready' });
    // Errors have their shape too, and each is one its operation publishes.
    const errors: Array<[string, Parameters<typeof rest>[1], number]> = [
      ['/documents/{id}', { path: '/documents/shapes/none.md' }, 404],
      ['/documents', { path: '/documents?limit=101' }, 400],
      ['/documents', { path: '/documents', headers: {} }, 401],
      [
        '/documents/{id}',
        {
          method: 'PUT',
          path: '/documents/shapes/a.md',
          headers: WRITE,
          body: { body: 'x', expected_revision: 1 },
        },
        409,
      ],
      [
        '/documents/{id}',
        {
          method: 'PUT',
          path: '/documents/shapes/a.md',
          headers: { ...WRITE, 'If-Match': '"1"' },
          body: { body: 'x' },
        },
        412,
      ],
      [
        '/documents',
        {
          method: 'POST',
          path: '/documents',
          headers: WRITE,
          body: { document_id: 'shapes/a.md', body: 'again' },
        },
        409,
      ],
      [
        '/documents',
        {
          method: 'POST',
          path: '/documents',
          headers: WRITE,
          body: { document_id: 'shapes/c.md', body: 'x', tags: ['a', 'b', 'c', ' '] },
        },
        400,
      ],
      [
        '/documents',
        {
          method: 'POST',
          path: '/documents',
          headers: WRITE,
          body: { document_id: 'shapes/c.md', body: 'x', title: 't'.repeat(301) },
        },
        413,
      ],
      [
        '/documents',
        { method: 'POST', path: '/documents', headers: WRITE, body: '{"document_id":' },
        400,
      ],
      [
        '/documents',
        {
          method: 'POST',
          path: '/documents',
          headers: { ...HEADERS, 'Content-Type': 'text/plain' },
          body: '{}',
        },
        415,
      ],
      [
        '/documents/{id}',
        {
          method: 'PATCH',
          path: '/documents/shapes/a.md',
          headers: WRITE,
          body: { old_str: 'no such text', new_str: 'y' },
        },
        422,
      ],
      [
        '/documents/{id}',
        {
          method: 'PATCH',
          path: '/documents/shapes/a.md',
          headers: WRITE,
          body: { old_str: 'e', new_str: 'y' },
        },
        409,
      ],
      [
        '/documents/{id}/restore',
        {
          method: 'POST',
          path: '/documents/shapes/a.md/restore',
          headers: WRITE,
          body: { revision: 99 },
        },
        404,
      ],
      ['/documents/{id}/history', { path: '/documents/shapes/none.md/history' }, 404],
      ['/documents/{id}/links', { path: '/documents/shapes/none.md/links' }, 404],
      ['/documents/{id}/backlinks', { path: '/documents/shapes/a.md/backlinks?limit=0' }, 400],
      [
        '/documents/{id}/neighbourhood',
        { path: '/documents/shapes/a.md/neighbourhood?depth=9' },
        400,
      ],
      ['/documents/links/broken', { path: '/documents/links/broken?cursor=%21' }, 400],
      ['/documents/changes', { path: '/documents/changes?since=yesterday' }, 400],
      ['/documents/folders', { path: '/documents/folders?parent=a//b' }, 400],
      ['/documents/{id}', { method: 'DELETE', path: '/documents/shapes/none.md' }, 404],
      [
        '/documents/{id}/move',
        {
          method: 'POST',
          path: '/documents/shapes/none.md/move',
          headers: WRITE,
          body: { to: 'shapes/z.md' },
        },
        404,
      ],
      ['/search', { path: '/search?query=' }, 400],
      [
        '/admin/vectors/reindex',
        {
          method: 'POST',
          path: '/admin/vectors/reindex',
          headers: WRITE,
          body: { folder: 'shapes/' },
        },
        400,
      ],
    ];
    for (const [template, request, status] of errors) {
      const answer = await rest(template, request);
      expect({ template, status: answer.status }).toEqual({ template, status });
    }
  });

  it('every /sources answer matches its published schema', async () => {
    await writeFile(join(folder, 'a.md'), '# A\n\nA note of the folder.\n');
    const declaration = { id: 'shapes', kind: 'folder', path: folder, mount: 'shapes-source' };
    await rest('/sources', {
      method: 'POST',
      path: '/sources',
      headers: WRITE,
      body: declaration,
    });
    // A run not ended yet has its counts too, and no lease bookkeeping.
    const asked = await rest('/sources/{id}/sync', {
      method: 'POST',
      path: '/sources/shapes/sync',
    });
    expect(asked.status).toBe(202);
    const ended = await sourceRunEnded(
      t.baseUrl,
      HEADERS,
      'shapes',
      (r) => r.id === asked.body.id,
      'the sync',
    );
    expect(ended).toMatchObject({ status: 'succeeded', message: null });
    const listed = await rest('/sources', { path: '/sources' });
    expect(listed.body.sources[0].documents).toBe(1);
    await rest('/sources/{id}', { path: '/sources/shapes' });
    await rest('/sources/{id}/runs', { path: '/sources/shapes/runs?limit=5' });
    await rest('/sources/{id}', {
      method: 'PUT',
      path: '/sources/shapes',
      headers: WRITE,
      body: { ...declaration, every: '2h' },
    });
    const errors: Array<[string, Parameters<typeof rest>[1], number]> = [
      ['/sources', { path: '/sources', headers: {} }, 401],
      ['/sources', { path: '/sources?kind=git' }, 400],
      ['/sources/{id}', { path: '/sources/none' }, 404],
      ['/sources/{id}/runs', { path: '/sources/shapes/runs?limit=0' }, 400],
      ['/sources/{id}/runs', { path: '/sources/none/runs' }, 404],
      ['/sources/{id}/sync', { method: 'POST', path: '/sources/none/sync' }, 404],
      [
        '/sources/{id}/sync',
        { method: 'POST', path: '/sources/shapes/sync?confirm_deletions=yes' },
        400,
      ],
      ['/sources', { method: 'POST', path: '/sources', headers: WRITE, body: declaration }, 409],
      [
        '/sources',
        { method: 'POST', path: '/sources', headers: WRITE, body: { id: 'x', kind: 'ftp' } },
        400,
      ],
      [
        '/sources',
        {
          method: 'POST',
          path: '/sources',
          headers: { ...HEADERS, 'Content-Type': 'text/plain' },
          body: '{}',
        },
        415,
      ],
      [
        '/sources/{id}',
        {
          method: 'PUT',
          path: '/sources/shapes',
          headers: WRITE,
          body: { ...declaration, mount: 'elsewhere' },
        },
        400,
      ],
      ['/sources/{id}', { method: 'DELETE', path: '/sources/none' }, 404],
    ];
    for (const [template, request, status] of errors) {
      const answer = await rest(template, request);
      expect({ template, status: answer.status }).toEqual({ template, status });
    }
    const removed = await send(t.baseUrl, {
      method: 'DELETE',
      path: '/sources/shapes',
      headers: HEADERS,
    });
    expect(removed.status).toBe(204);
  }, 60_000);

  it.each(['2025-06-18', '2026-07-28'])(
    'every tool answers the outputSchema of tools/list (%s)',
    async (era) => {
      const modern = era === '2026-07-28';
      const mcp = (method: string, params: Record<string, unknown> = {}) =>
        modern
          ? modernPost(t.baseUrl, '/mcp', method, params, { headers: HEADERS })
          : post(t.baseUrl, '/mcp', rpc(method, params), {
              Accept: 'application/json',
              'MCP-Protocol-Version': era,
              ...HEADERS,
            });
      const listed = (await mcp('tools/list')).body.result.tools as Json[];
      expect(listed.map((tool) => tool.name)).toEqual(ALL_TOOLS);
      const prefix = `shapes-${era}`;
      await send(t.baseUrl, {
        method: 'POST',
        path: '/documents',
        headers: WRITE,
        body: { document_id: `${prefix}/seed.md`, body: '# Seed\n\nThe release checklist.' },
      });
      const calls = callsFor(prefix, pages.url);
      await waitFor(
        async () =>
          (await mcp('tools/call', { name: 'search_knowledge', arguments: calls.search_knowledge }))
            .body.result.structuredContent.results.length > 0,
        'the seed to be searchable',
      );
      for (const tool of listed) {
        const answer = await mcp('tools/call', { name: tool.name, arguments: calls[tool.name] });
        const result = answer.body.result;
        const validate = ajv.compile(closed(tool.outputSchema));
        expect({
          tool: tool.name,
          isError: result.isError ?? false,
          errors: validate(result.structuredContent) ? null : validate.errors,
        }).toEqual({ tool: tool.name, isError: false, errors: null });
      }
    },
  );
});
