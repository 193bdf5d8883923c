import type { Client } from 'pg';
import { startTestApp, TestApp } from './support/app';
import { post, rpc, send } from './support/mcp-http';
import { type CraftingIssuer, startCraftingIssuer } from './support/oidc';

const CANONICAL = 'https://kb.example.test';
const AUD = `${CANONICAL}/mcp`;

function base64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString(
    'base64url',
  );
}

/**
 * Tokens no honest authorization server issues (docs/oauth.md; bad input): each is a 401, 403
 * or 503 with a JSON body that names the problem and never echoes the token; nothing is
 * written; the server stays healthy. The issuer is one of our own making, so that it can
 * sign what a real one would refuse to, and lose or slow its key set.
 */
describe('OAuth: tokens that must be refused', () => {
  let issuer: CraftingIssuer;
  let t: TestApp;
  let db: Client;
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    issuer = await startCraftingIssuer();
    t = await startTestApp({
      OAUTH_ISSUER: issuer.issuer,
      OAUTH_RESOURCE: CANONICAL,
      OAUTH_HTTP_TIMEOUT_MS: '300',
    });
    db = await t.db.client();
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.stop();
  });

  async function upload(token: string) {
    return post(
      t.baseUrl,
      '/mcp',
      rpc('tools/call', {
        name: 'upload_document',
        arguments: { document_id: 'bad/token', title: 't', body: 'never written' },
      }),
      { Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}` },
    );
  }

  it('accepts a well-made token (the control case)', async () => {
    const token = await issuer.sign({ aud: AUD, scope: 'kb.admin' }, { typ: 'at+jwt' });
    const response = await post(t.baseUrl, '/mcp', rpc('tools/list'), {
      Authorization: `Bearer ${token}`,
    });
    expect(response.status).toBe(200);
  });

  const cases: Array<[string, (i: CraftingIssuer) => Promise<string> | string, RegExp]> = [
    ['expired', (i) => i.sign({ aud: AUD, scope: 'kb.admin', exp: now() - 600 }), /expired/],
    [
      'not valid yet',
      (i) => i.sign({ aud: AUD, scope: 'kb.admin', nbf: now() + 600 }),
      /not valid yet/,
    ],
    [
      'for another audience',
      (i) => i.sign({ aud: 'https://other.example/mcp', scope: 'kb.admin' }),
      /aud/,
    ],
    [
      'from another issuer',
      (i) => i.sign({ aud: AUD, scope: 'kb.admin', iss: 'https://evil.example' }),
      /another authorization server/,
    ],
    ['without exp', (i) => i.sign({ aud: AUD, scope: 'kb.admin', exp: undefined }), /expiry|exp/],
    [
      'alg none',
      () =>
        `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ aud: AUD, scope: 'kb.admin', exp: now() + 60 })}.`,
      /algorithm|well-formed/,
    ],
    [
      'HS256 signed with the public key',
      async (i) => {
        const { createHmac } = await import('node:crypto');
        const head = base64url({ alg: 'HS256', kid: 'crafting-1' });
        const body = base64url({ iss: i.issuer, aud: AUD, scope: 'kb.admin', exp: now() + 60 });
        const secret = JSON.stringify(i.jwks.keys[0]);
        const mac = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
        return `${head}.${body}.${mac}`;
      },
      /algorithm/,
    ],
    [
      'signed by an unknown key under a known kid',
      (i) => i.signWithUnknownKey({ aud: AUD, scope: 'kb.admin' }),
      /signature/,
    ],
    [
      'with an unknown kid',
      (i) => i.signWithUnknownKey({ aud: AUD, scope: 'kb.admin' }, 'nobody'),
      /kid/,
    ],
    ['malformed base64', () => 'eyJhbGciOiJSUzI1NiJ9.@@@.xyz', /not a JWT|well-formed/],
    ['three dots of nothing', () => 'a.b.c', /well-formed/],
    [
      'an ID token (typ)',
      (i) => i.sign({ aud: AUD, scope: 'kb.admin' }, { typ: 'id_token+jwt' }),
      /not an access token/,
    ],
    ['9 KiB long', () => `${'a'.repeat(9000)}.b.c`, /longer than 8192/],
  ];

  it.each(cases)(
    '%s: 401 invalid_token naming the problem, nothing written',
    async (_name, make, reason) => {
      const token = await make(issuer);
      const before = (await db.query('SELECT count(*)::int AS n FROM kb_documents')).rows[0].n;
      const response = await upload(token);
      expect(response.status).toBe(401);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
      expect(response.body.error.message).toMatch(reason);
      expect(response.text).not.toContain(token.slice(0, 40));
      expect(response.headers['www-authenticate']).not.toContain(token.slice(0, 40));
      expect((await db.query('SELECT count(*)::int AS n FROM kb_documents')).rows[0].n).toBe(
        before,
      );
    },
  );

  it('a 64 KiB token is refused by the header limit with a JSON 431', async () => {
    const response = await post(t.baseUrl, '/mcp', rpc('tools/list'), {
      Authorization: `Bearer ${'a'.repeat(64 * 1024)}`,
    });
    expect(response.status).toBe(431);
    expect(response.body.error).toBeDefined();
  });

  it.each([
    ['commas', 'kb.read,kb.admin'],
    ['semicolons', 'kb.admin;kb.read'],
    ['a quoted scope', '"kb.admin"'],
  ])('a scope string with %s grants nothing: 403 insufficient_scope', async (_name, scope) => {
    const token = await issuer.sign({ aud: AUD, scope });
    const response = await upload(token);
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(response.headers['www-authenticate']).toContain('scope="kb.admin"');
  });

  it('scopes as an scp array (Okta) or scp string (Entra ID), and tabs between them, are understood', async () => {
    for (const claims of [
      { scp: ['kb.admin'] },
      { scp: 'kb.read kb.admin' },
      { scope: 'kb.read\tkb.admin' },
    ]) {
      const token = await issuer.sign({ aud: AUD, ...claims });
      const response = await post(t.baseUrl, '/mcp', rpc('tools/list'), {
        Authorization: `Bearer ${token}`,
      });
      expect(response.status).toBe(200);
    }
  });

  it.each([
    [
      'Keycloak',
      { typ: 'JWT' },
      { azp: 'kb-app', scope: 'openid profile kb.admin', sub: 'f3c1a6e2-user' },
      'kb-app',
    ],
    [
      'Okta',
      { typ: 'JWT' },
      { cid: '0oa1okta', scp: ['kb.admin'], sub: 'alice@example.com' },
      '0oa1okta',
    ],
    [
      'Entra ID v1 (app roles)',
      { typ: 'JWT' },
      { appid: 'entra-app-id', roles: ['kb.admin'], sub: 'entra-oid' },
      'entra-app-id',
    ],
    [
      'Entra ID v2',
      { typ: 'JWT' },
      { azp: 'entra-client', scp: 'kb.read kb.admin', sub: 'entra-sub' },
      'entra-client',
    ],
    [
      'Auth0 (RFC 9068)',
      { typ: 'at+jwt' },
      { client_id: 'auth0client', scope: 'kb.admin', sub: 'auth0|123' },
      'auth0client',
    ],
  ] as const)(
    'a %s-shaped token is understood: scopes, subject and client in the audit row',
    async (name, header, claims, client) => {
      const token = await issuer.sign({ aud: AUD, ...claims }, header);
      const id = `shapes/${name.replace(/\W+/g, '-').toLowerCase()}.md`;
      const response = await post(
        t.baseUrl,
        '/mcp',
        rpc('tools/call', {
          name: 'upload_document',
          arguments: { document_id: id, content: name },
        }),
        { Accept: 'application/json', Authorization: `Bearer ${token}` },
      );
      expect(response.status).toBe(200);
      expect(response.body.result.isError).toBeFalsy();
      const audit = await db.query('SELECT actor FROM kb_audit WHERE document_id = $1', [id]);
      expect(audit.rows).toEqual([{ actor: `oauth:${claims.sub} (client ${client})` }]);
    },
  );

  it('the server is healthy after all of it', async () => {
    const ready = await send(t.baseUrl, { path: '/health/ready' });
    expect(ready.status).toBe(200);
  });
});

describe('OAuth: an authorization server whose keys are down or slow', () => {
  it.each(['down', 'slow'] as const)(
    'JWKS %s: 503 with Retry-After (bounded wait), then 200 once it answers',
    async (mode) => {
      // A server of its own: the key set is fetched once and then cached.
      const issuer = await startCraftingIssuer();
      const t = await startTestApp({
        OAUTH_ISSUER: issuer.issuer,
        OAUTH_RESOURCE: CANONICAL,
        OAUTH_HTTP_TIMEOUT_MS: '300',
      });
      try {
        issuer.jwksMode = mode;
        issuer.slowMs = 1500;
        const token = await issuer.sign({ aud: AUD, scope: 'kb.admin' });
        const auth = { Authorization: `Bearer ${token}` };
        const refused = await post(t.baseUrl, '/mcp', rpc('tools/list'), auth);
        expect(refused.status).toBe(503);
        expect(refused.headers['retry-after']).toBe('5');
        expect(refused.body.error.message).toMatch(/keys \(JWKS\)/);
        expect(refused.text).not.toContain('127.0.0.1');
        const rest = await send(t.baseUrl, { path: '/documents', headers: auth });
        expect(rest.status).toBe(503);
        expect(rest.body.error).toMatchObject({ code: 'UNAVAILABLE', retry_after_seconds: 5 });
        issuer.jwksMode = 'ok';
        const accepted = await post(t.baseUrl, '/mcp', rpc('tools/list'), auth);
        expect(accepted.status).toBe(200);
      } finally {
        await t.close();
        await issuer.stop();
      }
    },
  );

  it('an issuer whose metadata cannot be read: 503, not a hang and not a 500', async () => {
    const t = await startTestApp({
      OAUTH_ISSUER: 'http://127.0.0.1:9',
      OAUTH_RESOURCE: CANONICAL,
      OAUTH_HTTP_TIMEOUT_MS: '300',
    });
    try {
      const response = await post(t.baseUrl, '/mcp', rpc('tools/list'), {
        Authorization: 'Bearer a.b.c',
      });
      expect(response.status).toBe(503);
      expect(response.body.error.message).toMatch(/metadata/);
      expect(response.text).not.toContain('127.0.0.1');
      // API keys and the rest of the server do not depend on it.
      expect((await send(t.baseUrl, { path: '/health/ready' })).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
