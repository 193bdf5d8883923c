import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

const PROVIDER_SCRIPT = join(__dirname, 'oidc-provider.mjs');
const execFileAsync = promisify(execFile);

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

/** `oidc-browser.mjs`: a browser for oidc-provider's sign-in pages (also usable as `BROWSER`). */
export const BROWSER_SCRIPT = join(__dirname, 'oidc-browser.mjs');

/**
 * Signs `login` in at an authorization URL and gives consent, as a user would in a browser;
 * returns the callback URL the authorization server redirected to (with the code).
 */
export async function authorizeAsUser(authorizationUrl: string, login = 'alice'): Promise<URL> {
  const { stdout } = await execFileAsync(process.execPath, [
    BROWSER_SCRIPT,
    authorizationUrl,
    login,
  ]);
  return new URL(stdout.trim());
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
  const withDefaults = (claims: Record<string, unknown>) => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: state.issuer, sub: 'crafted-user', iat: now, exp: now + 3600, ...claims };
  };
  const state: CraftingIssuer = {
    issuer: '',
    jwks: { keys: [publicJwk] },
    jwksMode: 'ok',
    slowMs: 0,
    async sign(claims, header = {}) {
      return new SignJWT(withDefaults(claims))
        .setProtectedHeader({
          alg: header.alg ?? 'RS256',
          kid: header.kid ?? 'crafting-1',
          typ: header.typ,
        })
        .sign(privateKey);
    },
    async signWithUnknownKey(claims, kid = 'crafting-1') {
      return new SignJWT(withDefaults(claims))
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
