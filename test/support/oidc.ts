import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

const PROVIDER_SCRIPT = join(__dirname, 'oidc-provider.mjs');

export interface OidcClient {
  client_id: string;
  client_secret: string;
}

/** The real authorization server of `oidc-provider.mjs`, run as a child process on loopback. */
export interface OidcProvider {
  readonly issuer: string;
  readonly clients: Record<string, OidcClient>;
  /** An access token from the client-credentials grant for `resource`. */
  token(clientId: string, scope: string | undefined, resource: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startOidcProvider(args: string[] = []): Promise<OidcProvider> {
  const child = spawn(process.execPath, [PROVIDER_SCRIPT, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`oidc-provider exited ${code}: ${stderr}`)));
  });
  const started = JSON.parse(line) as { issuer: string; clients: Record<string, OidcClient> };
  return {
    issuer: started.issuer,
    clients: started.clients,
    async token(clientId, scope, resource) {
      const client = started.clients[clientId];
      const response = await fetch(`${started.issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${client.client_secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          resource,
          ...(scope === undefined ? {} : { scope }),
        }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (!response.ok || !body.access_token) {
        throw new Error(`token for ${clientId}: HTTP ${response.status} ${JSON.stringify(body)}`);
      }
      return body.access_token;
    },
    stop: () => stopChild(child),
  };
}

/**
 * Plays the user's browser against oidc-provider's development pages: follows redirects
 * with the cookies set, signs in as `login`, gives consent, and stops at the first redirect
 * to a URL starting with `redirectPrefix` (the client's callback), which it returns.
 */
export async function authorizeAsUser(
  authorizationUrl: string,
  redirectPrefix: string,
  login = 'alice',
): Promise<URL> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    if (url.startsWith(redirectPrefix)) return new URL(url);
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form,
    });
    for (const setCookie of response.headers.getSetCookie()) {
      const [pair] = setCookie.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
    }
    form = undefined;
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url).toString();
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (response.status !== 200 || action === undefined) {
      throw new Error(
        `authorization stopped at ${url}: HTTP ${response.status} ${html.slice(0, 300)}`,
      );
    }
    url = new URL(action, url).toString();
    form = /name="login"/.test(html)
      ? new URLSearchParams({ prompt: 'login', login, password: 'any' })
      : new URLSearchParams({ prompt: 'consent' });
  }
  throw new Error('authorization did not reach the callback in 20 steps');
}

/**
 * An issuer of our own making, for tokens a real authorization server would not issue:
 * expired, future, for another audience, signed with an unknown key... Serves RFC 8414
 * metadata and a JWKS that a test can slow down or take away.
 */
export interface CraftingIssuer {
  readonly issuer: string;
  readonly jwks: { keys: JWK[] };
  /** Signs `claims` (defaults: iss, sub, iat, exp in an hour) with the published key. */
  sign(
    claims: Record<string, unknown>,
    header?: { kid?: string; typ?: string; alg?: string },
  ): Promise<string>;
  /** Signs with a key that is not published (under the published kid unless told). */
  signWithUnknownKey(claims: Record<string, unknown>, kid?: string): Promise<string>;
  /** `ok`, `down` (503), `slow` (answers after `slowMs`) for the JWKS endpoint. */
  jwksMode: 'ok' | 'down' | 'slow';
  slowMs: number;
  stop(): Promise<void>;
}

export async function startCraftingIssuer(): Promise<CraftingIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const other = await generateKeyPair('RS256');
  const publicJwk = {
    ...(await exportJWK(publicKey)),
    kid: 'crafting-1',
    alg: 'RS256',
    use: 'sig',
  };
  const server = createServer((request, response) => {
    const json = (body: unknown) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (request.url === '/.well-known/oauth-authorization-server') {
      return json({
        issuer: state.issuer,
        jwks_uri: `${state.issuer}/jwks`,
        token_endpoint: `${state.issuer}/token`,
      });
    }
    if (request.url === '/jwks') {
      if (state.jwksMode === 'down') return response.writeHead(503).end();
      if (state.jwksMode === 'slow') {
        const timer = setTimeout(() => json(state.jwks), state.slowMs);
        response.on('close', () => clearTimeout(timer));
        return;
      }
      return json(state.jwks);
    }
    response.writeHead(404).end();
  });
  const state: CraftingIssuer = {
    issuer: '',
    jwks: { keys: [publicJwk] },
    jwksMode: 'ok',
    slowMs: 0,
    async sign(claims, header = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: state.issuer,
        sub: 'crafted-user',
        iat: now,
        exp: now + 3600,
        ...claims,
      })
        .setProtectedHeader({
          alg: header.alg ?? 'RS256',
          kid: header.kid ?? 'crafting-1',
          typ: header.typ,
        })
        .sign(privateKey);
    },
    async signWithUnknownKey(claims, kid = 'crafting-1') {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: state.issuer,
        sub: 'crafted-user',
        iat: now,
        exp: now + 3600,
        ...claims,
      })
        .setProtectedHeader({ alg: 'RS256', kid })
        .sign(other.privateKey);
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (state as { issuer: string }).issuer =
    `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
