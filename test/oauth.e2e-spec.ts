import { Logger } from '@nestjs/common';
import type { Client } from 'pg';
import { startTestApp, TestApp } from './support/app';
import { callTool, post, rpc, send, toolJson } from './support/mcp-http';
import { startOidcProvider, type OidcProvider } from './support/oidc';

const OPS = 'ops-key-0123456789abcdef-xyz';
/** The URL clients use, as behind an ingress: not the test server's own address. */
const CANONICAL = 'https://kb.example.test';

/**
 * OAuth 2.1 as a resource server (docs/oauth.md) against a real authorization server
 * (`oidc-provider` on loopback): tokens come from it over HTTP, nothing in the server is
 * replaced.
 */
describe('OAuth access tokens from a real authorization server', () => {
  let idp: OidcProvider;
  let t: TestApp;
  let db: Client;
  const resource = (path = '') => `${CANONICAL}${path}`;
  const count = async () =>
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM kb_documents')).rows[0].n;
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  beforeAll(async () => {
    idp = await startOidcProvider();
    t = await startTestApp({
      OAUTH_ISSUER: idp.issuer,
      OAUTH_RESOURCE: CANONICAL,
      API_KEYS: `ops:${OPS}:internal,admin`,
    });
    db = await t.db.client();
  });
  afterAll(async () => {
    await t?.close();
    await idp?.stop();
  });

  describe('Protected Resource Metadata (RFC 9728)', () => {
    it('describes the server at the root, with every scope', async () => {
      const response = await send(t.baseUrl, { path: '/.well-known/oauth-protected-resource' });
      expect(response.status).toBe(200);
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.body).toEqual({
        resource: resource(),
        authorization_servers: [idp.issuer],
        scopes_supported: ['kb.read', 'kb.write', 'kb.admin'],
        bearer_methods_supported: ['header'],
        resource_name: 'Agent Data knowledge base (all endpoints)',
      });
    });

    it.each([
      ['/readonly/mcp', ['kb.read']],
      ['/mcp-readonly', ['kb.read']],
      ['/gpt/mcp', ['kb.write']],
      ['/mcp', ['kb.admin']],
      ['/gpt-full/mcp', ['kb.admin']],
    ])('describes %s as its own resource with the scopes of its profile', async (path, scopes) => {
      const response = await send(t.baseUrl, {
        path: `/.well-known/oauth-protected-resource${path}`,
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        resource: resource(path),
        authorization_servers: [idp.issuer],
        scopes_supported: scopes,
      });
    });

    it('answers 404 for a path that is no resource, and a CORS preflight', async () => {
      const missing = await send(t.baseUrl, {
        path: '/.well-known/oauth-protected-resource/documents',
      });
      expect(missing.status).toBe(404);
      const preflight = await send(t.baseUrl, {
        method: 'OPTIONS',
        path: '/.well-known/oauth-protected-resource/mcp',
        headers: {
          Origin: 'http://localhost:6274',
          'Access-Control-Request-Headers': 'mcp-protocol-version',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-headers']).toMatch(/MCP-Protocol-Version/i);
    });
  });

  describe('challenges', () => {
    it.each([
      ['/mcp', 'kb.admin'],
      ['/readonly/mcp', 'kb.read'],
      ['/mcp-gpt', 'kb.write'],
    ])(
      '%s without a token: 401 JSON pointing at its metadata, even when SSE is asked for',
      async (path, scope) => {
        const response = await post(t.baseUrl, path, rpc('tools/list'), {
          Accept: 'text/event-stream',
        });
        expect(response.status).toBe(401);
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(response.headers['www-authenticate']).toBe(
          `Bearer realm="agent-data", resource_metadata="${CANONICAL}/.well-known/oauth-protected-resource${path}", scope="${scope}"`,
        );
        expect(response.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
      },
    );

    it('the admin API without a token: 401 pointing at the server metadata', async () => {
      const response = await send(t.baseUrl, { path: '/documents' });
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toBe(
        `Bearer realm="agent-data", resource_metadata="${CANONICAL}/.well-known/oauth-protected-resource", scope="kb.admin"`,
      );
      expect(response.body.error.code).toBe('UNAUTHENTICATED');
    });
  });

  describe('client-credentials tokens', () => {
    it('a kb.read token for /readonly/mcp lists the five read tools and reads', async () => {
      const token = await idp.token('kb-reader-cli', 'kb.read', resource('/readonly/mcp'));
      const list = await post(t.baseUrl, '/readonly/mcp', rpc('tools/list'), {
        Accept: 'application/json',
        ...bearer(token),
      });
      expect(list.status).toBe(200);
      expect(list.body.result.tools).toHaveLength(6);
      // The older path of the same profile is the same resource family.
      const older = await post(t.baseUrl, '/mcp-readonly', rpc('tools/list'), bearer(token));
      expect(older.status).toBe(200);
    });

    it('a read-only token is refused on the write tools with insufficient_scope, naming kb.write', async () => {
      const token = await idp.token('kb-reader-cli', 'kb.read', resource('/gpt/mcp'));
      const before = await count();
      const response = await post(
        t.baseUrl,
        '/gpt/mcp',
        rpc('tools/call', {
          name: 'upload_document',
          arguments: { document_id: 'oauth/refused', title: 'x', body: 'x' },
        }),
        bearer(token),
      );
      expect(response.status).toBe(403);
      expect(response.headers['www-authenticate']).toBe(
        `Bearer realm="agent-data", error="insufficient_scope", error_description="the gpt profile needs the scope kb.write", resource_metadata="${CANONICAL}/.well-known/oauth-protected-resource/gpt/mcp", scope="kb.write"`,
      );
      expect(response.body.error.message).toContain('insufficient_scope');
      expect(response.body.error.message).toContain('kb.write');
      expect(response.text).not.toContain(token);
      expect(await count()).toBe(before);
    });

    it('a kb.write token writes; the audit row and the tool-call log name its subject and client, never the token', async () => {
      const token = await idp.token('kb-writer-cli', 'kb.read kb.write', resource('/gpt/mcp'));
      const logged: unknown[] = [];
      const spy = jest
        .spyOn(Logger.prototype, 'log')
        .mockImplementation((message: unknown) => void logged.push(message));
      let envelope;
      try {
        envelope = await callTool(
          t.baseUrl,
          '/gpt/mcp',
          'upload_document',
          { document_id: 'oauth/written', title: 'By token', body: 'written with an access token' },
          bearer(token),
        );
      } finally {
        spy.mockRestore();
      }
      expect(logged).toContainEqual(
        expect.objectContaining({
          msg: 'tool call',
          key: 'oauth:kb-writer-cli',
          subject: 'kb-writer-cli',
          client_id: 'kb-writer-cli',
          tool: 'upload_document',
        }),
      );
      expect(JSON.stringify(logged)).not.toContain(token.slice(-40));
      expect(toolJson(envelope)).toMatchObject({ document_id: 'oauth/written', revision: 1 });
      const audit = await db.query(
        `SELECT actor FROM kb_audit WHERE document_id = 'oauth/written'`,
      );
      expect(audit.rows).toEqual([{ actor: 'oauth:kb-writer-cli (client kb-writer-cli)' }]);
    });

    it('a token for another resource is refused with invalid_token (aud)', async () => {
      const elsewhere = await idp.token(
        'kb-admin-cli',
        'kb.admin',
        'https://elsewhere.example/mcp',
      );
      const response = await post(t.baseUrl, '/mcp', rpc('tools/list'), bearer(elsewhere));
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
      expect(response.body.error.message).toContain('aud');
      // A token for one route is not one for another profile's route.
      const readonly = await idp.token('kb-writer-cli', 'kb.write', resource('/readonly/mcp'));
      const other = await post(t.baseUrl, '/gpt/mcp', rpc('tools/list'), bearer(readonly));
      expect(other.status).toBe(401);
    });

    it('a token with no scope that maps to a profile is 403', async () => {
      const token = await idp.token('kb-nothing-cli', undefined, resource('/readonly/mcp'));
      const response = await post(t.baseUrl, '/readonly/mcp', rpc('tools/list'), bearer(token));
      expect(response.status).toBe(403);
      expect(response.headers['www-authenticate']).toContain('scope="kb.read"');
    });

    it('a kb.admin token reaches the admin API, a kb.read one gets 403 naming kb.admin', async () => {
      const admin = await idp.token('kb-admin-cli', 'kb.admin', resource());
      const created = await send(t.baseUrl, {
        method: 'POST',
        path: '/documents',
        headers: { 'Content-Type': 'application/json', ...bearer(admin) },
        body: { document_id: 'oauth/rest', title: 'REST', body: 'by an admin token' },
      });
      expect(created.status).toBe(201);
      const audit = await db.query(`SELECT actor FROM kb_audit WHERE document_id = 'oauth/rest'`);
      expect(audit.rows).toEqual([{ actor: 'oauth:kb-admin-cli (client kb-admin-cli)' }]);
      const reader = await idp.token('kb-reader-cli', 'kb.read', resource());
      const refused = await send(t.baseUrl, { path: '/documents', headers: bearer(reader) });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({
        code: 'FORBIDDEN',
        error_code: 'insufficient_scope',
        scope: 'kb.admin',
      });
    });

    it('API keys keep working beside tokens', async () => {
      const byKey = await post(t.baseUrl, '/mcp', rpc('tools/list'), { 'X-API-Key': OPS });
      expect(byKey.body.result.tools).toHaveLength(11);
      const byBearerKey = await send(t.baseUrl, { path: '/documents', headers: bearer(OPS) });
      expect(byBearerKey.status).toBe(200);
      // A value in X-API-Key is only ever a key, never a token.
      const token = await idp.token('kb-admin-cli', 'kb.admin', resource('/mcp'));
      const asKey = await post(t.baseUrl, '/mcp', rpc('tools/list'), { 'X-API-Key': token });
      expect(asKey.status).toBe(401);
    });
  });
});
