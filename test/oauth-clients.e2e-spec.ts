import { getRandomPort } from 'get-port-please';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, TestApp } from './support/app';
import { post, rpc } from './support/mcp-http';
import {
  authorizeAsUser,
  BROWSER_SCRIPT,
  type OidcProvider,
  startOidcProvider,
} from './support/oidc';

const MCP_REMOTE = join(__dirname, '..', 'node_modules', 'mcp-remote', 'dist', 'proxy.js');
const CALLBACK = 'http://127.0.0.1:33418/callback';

/** What an MCP host keeps for one server: its registration, PKCE verifier and tokens. */
class InMemoryOAuthClient implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  private information: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';

  get redirectUrl(): string {
    return CALLBACK;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'agent-data tests',
      redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    } as OAuthClientMetadata;
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * Real clients against a server with OAuth on, and a real authorization server: the
 * official SDK client with its OAuth provider (discovery, dynamic registration, the
 * authorization code with PKCE and a resource indicator, played through oidc-provider's
 * sign-in pages), `mcp-remote` as a child process (client credentials: no browser), and
 * opaque tokens checked by introspection.
 */
describe('MCP clients that authenticate with OAuth', () => {
  let idp: OidcProvider;
  let t: TestApp;

  beforeAll(async () => {
    idp = await startOidcProvider();
    // The resource must be the URL the clients use: the SDK checks that it matches.
    const port = await getRandomPort('127.0.0.1');
    t = await startTestApp({
      PORT: String(port),
      OAUTH_ISSUER: idp.issuer,
      OAUTH_RESOURCE: `http://127.0.0.1:${port}`,
      OAUTH_INTROSPECTION_CLIENT_ID: 'kb-introspector',
      OAUTH_INTROSPECTION_CLIENT_SECRET: idp.clients['kb-introspector'].client_secret,
    });
  });
  afterAll(async () => {
    await t?.close();
    await idp?.stop();
  });

  it.each(['/readonly/mcp', '/mcp'])(
    'the official SDK client signs a user in (code + PKCE) and uses %s',
    async (path) => {
      const provider = new InMemoryOAuthClient();
      const url = new URL(path, t.baseUrl);
      const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
      await expect(
        new Client({ name: 'oauth-test', version: '1' }).connect(first),
      ).rejects.toBeInstanceOf(UnauthorizedError);
      // The SDK found our metadata, registered itself, and asks for the route's scope and resource.
      const asked = provider.authorizationUrl!;
      expect(asked.origin).toBe(idp.issuer);
      expect(asked.searchParams.get('resource')).toBe(url.toString());
      expect(asked.searchParams.get('scope')).toBe(path === '/mcp' ? 'kb.admin' : 'kb.read');
      expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
      const callback = await authorizeAsUser(asked.toString(), 'alice');
      await first.finishAuth(callback.searchParams.get('code')!);

      const client = new Client({ name: 'oauth-test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(path === '/mcp' ? 11 : 6);
      const listed = await client.callTool({ name: 'list_documents', arguments: {} });
      expect(listed.isError).toBeFalsy();
      if (path === '/mcp') {
        // The user's subject and the registered client are the audit actor.
        const written = await client.callTool({
          name: 'upload_document',
          arguments: { document_id: 'oauth/by-alice.md', title: 'A', body: 'by alice' },
        });
        expect(written.isError).toBeFalsy();
        const db = await t.db.client();
        const audit = await db.query(
          `SELECT actor FROM kb_audit WHERE document_id = 'oauth/by-alice.md'`,
        );
        const clientId = (provider.clientInformation() as { client_id: string }).client_id;
        expect(audit.rows).toEqual([{ actor: `oauth:alice (client ${clientId})` }]);
      }
      await client.close();
    },
  );

  /**
   * `mcp-remote` as Claude Desktop runs it, for `path`, with the official SDK client on its
   * stdio; its token store in a directory of its own. Resolves the tool count and its log.
   */
  async function throughMcpRemote(
    path: string,
    args: string[],
    env: Record<string, string> = {},
  ): Promise<{ tools: number; log: string }> {
    const configDir = mkdtempSync(join(tmpdir(), 'mcp-remote-'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, new URL(path, t.baseUrl).toString(), ...args, '--transport', 'http-only'],
      env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir, ...env } as Record<string, string>,
      stderr: 'pipe',
    });
    let log = '';
    transport.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const client = new Client({ name: 'mcp-remote-test', version: '1' });
    try {
      await client.connect(transport);
      return { tools: (await client.listTools()).tools.length, log };
    } catch (error) {
      throw new Error(`mcp-remote on ${path}: ${String(error)}\n${log}`);
    } finally {
      await client.close();
      rmSync(configDir, { recursive: true, force: true });
    }
  }

  it.each([
    ['/readonly/mcp', 'kb-reader-cli', 6],
    ['/mcp', 'kb-admin-cli', 11],
  ] as const)(
    'mcp-remote bridges stdio to %s with the client-credentials grant',
    async (path, clientId, tools) => {
      const info = idp.clients[clientId];
      const client = JSON.stringify({
        client_id: info.client_id,
        client_secret: info.client_secret,
      });
      const bridged = await throughMcpRemote(path, [
        '--client-credentials',
        '--static-oauth-client-info',
        client,
      ]);
      expect(bridged.tools).toBe(tools);
    },
  );

  it('mcp-remote signs a user in through the browser (dynamic registration, code + PKCE) and bridges /readonly/mcp', async () => {
    // mcp-remote opens the sign-in page with xdg-open, which runs $BROWSER: our browser.
    const bridged = await throughMcpRemote('/readonly/mcp', [], {
      BROWSER: BROWSER_SCRIPT,
      DISPLAY: '',
      WAYLAND_DISPLAY: '',
    });
    expect(bridged.tools).toBe(6);
    expect(bridged.log).toContain('scope the server asked for: kb.read');
  });

  it('an opaque token is introspected (RFC 7662); one the issuer does not know is refused', async () => {
    const resource = new URL('/mcp', t.baseUrl).toString();
    const token = await idp.token('kb-opaque-cli', 'kb.read kb.write kb.admin', resource);
    expect(token.split('.')).toHaveLength(1);
    const accepted = await post(t.baseUrl, '/mcp', rpc('tools/list'), {
      Authorization: `Bearer ${token}`,
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.result.tools).toHaveLength(11);
    const unknown = await post(t.baseUrl, '/mcp', rpc('tools/list'), {
      Authorization: 'Bearer not-a-token-the-issuer-knows',
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.message).toContain('not active');
  });
});
