#!/usr/bin/env node
// A real OAuth 2.1 / OpenID Connect authorization server on loopback, for the tests and for
// trying OAuth by hand: `node test/support/oidc-provider.mjs [--port 9090]` prints its
// issuer and test clients as one JSON line, then serves until stopped.
//
// It is `oidc-provider` (the certified Node implementation) with PKCE, resource indicators
// (RFC 8707: access tokens are JWTs whose `aud` is the resource asked for), client
// credentials, introspection, dynamic client registration and its development login page
// (any login name, any password; consent is given for the scopes asked). Never for
// production: keys are made at start-up and everything lives in memory.
import { generateKeyPairSync } from 'node:crypto';
import { parseArgs } from 'node:util';
import Provider from 'oidc-provider';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    alg: { type: 'string', default: 'RS256' },
    'token-ttl': { type: 'string', default: '3600' },
    // The console's address (`http://127.0.0.1:<port>/console/`): adds its public client.
    'console-redirect': { type: 'string' },
  },
});

const SCOPES = ['kb.read', 'kb.write', 'kb.admin'];
/** Confidential clients for the client-credentials grant, one per set of scopes. */
const MACHINE_CLIENTS = {
  'kb-admin-cli': 'kb.read kb.write kb.admin',
  'kb-writer-cli': 'kb.read kb.write',
  'kb-reader-cli': 'kb.read',
  'kb-nothing-cli': '',
};
/** The groups each machine client's tokens carry (the `groups` claim), for access policies. */
const CLIENT_GROUPS = { 'kb-writer-cli': ['eng'], 'kb-reader-cli': ['support', 'eng-readers'] };
/** Its access tokens are opaque: the resource server must introspect them. */
const OPAQUE_CLIENT = 'kb-opaque-cli';
const INTROSPECTION_CLIENT = 'kb-introspector';
/** A public client (PKCE, no secret) for the authorization-code flow, loopback redirects. */
const PUBLIC_CLIENT = 'kb-public-app';
const secretOf = (clientId) => `${clientId}-secret-0123456789`;
/** The operator console's public client (with --console-redirect). */
const CONSOLE_CLIENT = 'kb-console';

const jwk = signingKey(values.alg);
const ttl = Number(values['token-ttl']);

// The port must be known before the issuer URL: listen first, then build the provider.
const { createServer } = await import('node:http');
let handler = (_req, res) => res.writeHead(503).end();
const server = createServer((req, res) => handler(req, res));
await new Promise((resolve) => server.listen(Number(values.port), values.host, resolve));
const { port } = server.address();
const issuer = `http://${values.host}:${port}`;

const provider = new Provider(issuer, {
  clients: [
    ...Object.entries(MACHINE_CLIENTS).map(([clientId, scope]) => ({
      client_id: clientId,
      client_secret: secretOf(clientId),
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      ...(scope === '' ? {} : { scope }),
    })),
    {
      client_id: OPAQUE_CLIENT,
      client_secret: secretOf(OPAQUE_CLIENT),
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: SCOPES.join(' '),
    },
    {
      client_id: INTROSPECTION_CLIENT,
      client_secret: secretOf(INTROSPECTION_CLIENT),
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    },
    {
      client_id: PUBLIC_CLIENT,
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback', 'http://localhost/callback'],
    },
    ...(values['console-redirect'] === undefined
      ? []
      : [
          {
            // The operator console: a browser application, PKCE, no secret.
            client_id: CONSOLE_CLIENT,
            application_type: 'web',
            token_endpoint_auth_method: 'none',
            grant_types: ['authorization_code'],
            response_types: ['code'],
            redirect_uris: [values['console-redirect']],
          },
        ]),
  ],
  scopes: ['openid', 'offline_access', ...SCOPES],
  claims: { openid: ['sub'] },
  jwks: { keys: [jwk] },
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  pkce: { required: () => true },
  ttl: { AccessToken: ttl, ClientCredentials: ttl },
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // A client that names no resource gets none: its token is not for us.
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resourceIndicator, client) => {
        const url = new URL(resourceIndicator);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') {
          throw new Provider.errors.InvalidTarget();
        }
        const opaque = client.clientId === OPAQUE_CLIENT;
        return {
          scope: SCOPES.join(' '),
          audience: resourceIndicator,
          accessTokenTTL: ttl,
          accessTokenFormat: opaque ? 'opaque' : 'jwt',
          ...(opaque ? {} : { jwt: { sign: { alg: values.alg } } }),
        };
      },
    },
  },
  // Tokens carry the client as `client_id` (RFC 9068), the scopes as `scope`, and some
  // clients' groups as `groups`.
  extraTokenClaims: (_ctx, token) => {
    const groups = CLIENT_GROUPS[token.clientId];
    return groups === undefined ? undefined : { groups };
  },
});
provider.proxy = false;
handler = provider.callback();

const clients = Object.fromEntries(
  [...Object.keys(MACHINE_CLIENTS), OPAQUE_CLIENT, INTROSPECTION_CLIENT].map((id) => [
    id,
    { client_id: id, client_secret: secretOf(id), scope: MACHINE_CLIENTS[id] ?? null },
  ]),
);
clients[PUBLIC_CLIENT] = {
  client_id: PUBLIC_CLIENT,
  redirect_uri: 'http://127.0.0.1:<any port>/callback',
};
process.stdout.write(`${JSON.stringify({ issuer, token_endpoint: `${issuer}/token`, clients })}\n`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}

function signingKey(alg) {
  const kid = `test-${alg.toLowerCase()}`;
  if (alg.startsWith('ES')) {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return { ...privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  }
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
}
