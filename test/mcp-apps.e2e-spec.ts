import { createHash } from 'node:crypto';
import request from 'supertest';
import { startTestApp, type TestApp } from './support/app';
import { APPS_CAPABILITIES, buildViews } from './support/mcp-apps';
import { post, rpc, type Json } from './support/mcp-http';
import { modernPost } from './support/mcp-modern';

const KEYS = { bob: 'bob-key-0123456789abcdef0123', admin: 'admin-key-0123456789abcdef01' };
/** Bob reads and writes team-b/ only. */
const POLICY = {
  rules: [
    { who: ['key:bob'], read: ['team-b/'], write: ['team-b/'] },
    { who: ['key:admin'], read: '*', write: ['*'] },
  ],
};
const VIEWS = ['ui://agent-data/search-results', 'ui://agent-data/document'];
const LEGACY = { Accept: 'application/json', 'MCP-Protocol-Version': '2025-11-25' };

/**
 * MCP Apps (docs/mcp.md, "Apps (views in the chat)"): the views are offered to hosts that
 * declare the extension, in `initialize` (2025) or per request (2026), and to no one else.
 */
describe('MCP Apps views', () => {
  let t: TestApp;
  const as = (who: keyof typeof KEYS) => ({ 'X-API-Key': KEYS[who] });

  const legacy = async (
    method: string,
    params: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) => {
    const response = await post(t.baseUrl, '/mcp', rpc(method, params), {
      ...LEGACY,
      ...as('admin'),
      ...headers,
    });
    expect(response.status).toBe(200);
    return response;
  };
  const modern = async (
    method: string,
    params: Record<string, unknown> = {},
    capabilities: Record<string, unknown> = {},
    who: keyof typeof KEYS = 'admin',
  ) => {
    const response = await modernPost(t.baseUrl, '/mcp', method, params, {
      headers: as(who),
      meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities },
    });
    expect(response.status).toBe(200);
    return response.body as Json;
  };
  /** The session id an Apps host gets from its 2025 handshake. */
  const appsSession = async (capabilities: Record<string, unknown> = APPS_CAPABILITIES) => {
    const response = await legacy('initialize', {
      protocolVersion: '2025-11-25',
      capabilities,
      clientInfo: { name: 'host', version: '1' },
    });
    return { response, session: response.headers['mcp-session-id'] as string | undefined };
  };

  beforeAll(async () => {
    buildViews();
    t = await startTestApp({
      API_KEYS: `bob:${KEYS.bob}:internal;admin:${KEYS.admin}:admin,internal`,
      ACCESS_POLICY: JSON.stringify(POLICY),
    });
    for (const id of ['team-a/secret.md', 'team-b/open.md']) {
      await request(t.baseUrl)
        .post('/documents')
        .set(as('admin'))
        .send({ document_id: id, body: `# ${id}\n\nBody of ${id}.` })
        .expect(201);
    }
  });
  afterAll(() => t?.close());

  describe('hosts without the extension see no change', () => {
    it('tools/list and resources/list are the snapshot of before, in both eras', async () => {
      const listings = {
        legacyTools: (await legacy('tools/list')).body.result,
        legacyResources: (await legacy('resources/list')).body.result,
        modernTools: (await modern('tools/list')).result,
        modernResources: (await modern('resources/list')).result,
      };
      const text = JSON.stringify(listings);
      expect(text).not.toContain('ui://');
      expect(text).not.toContain('"ui"');
      expect(text).not.toContain('ui/resourceUri');
      // Names and shapes only: the resource entries' dates change with every run.
      expect({
        legacyTools: listings.legacyTools,
        modernTools: listings.modernTools,
        legacyResources: listings.legacyResources.resources.map((r: Json) => r.uri),
        modernResources: listings.modernResources.resources.map((r: Json) => r.uri),
      }).toMatchSnapshot();
    });

    it('their handshake declares nothing new and gets no session id; ui:// is not found', async () => {
      const { response, session } = await appsSession({});
      expect(session).toBeUndefined();
      expect(response.body.result.capabilities.extensions).toBeUndefined();
      const other = await appsSession({ extensions: { 'io.example/other': {} } });
      expect(other.session).toBeUndefined();
      // Refused as any URI that is not a document's: exactly as before the views existed.
      const read = await legacy('resources/read', { uri: VIEWS[0] });
      const unknown = await legacy('resources/read', { uri: 'ui://agent-data/none' });
      expect(read.body.error.code).toBe(-32602);
      expect(read.body.error.message).toBe(unknown.body.error.message);
      expect((await modern('resources/read', { uri: VIEWS[0] })).error.code).toBe(-32602);
      expect((await modern('server/discover')).result.capabilities.extensions).toBeUndefined();
    });
  });

  describe('2025 era: declared in initialize', () => {
    it('the handshake answers with the extension and a session id that carries it', async () => {
      const { response, session } = await appsSession();
      expect(response.body.result.capabilities.extensions).toEqual({
        'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] },
      });
      expect(session).toMatch(/^apps-/);
      const listed = (await legacy('tools/list', {}, { 'Mcp-Session-Id': session! })).body.result
        .tools as Json[];
      const meta = Object.fromEntries(listed.map((tool) => [tool.name, tool._meta]));
      expect(meta.search_knowledge).toEqual({
        ui: { resourceUri: VIEWS[0] },
        'ui/resourceUri': VIEWS[0],
      });
      expect(meta.get_document).toEqual({
        ui: { resourceUri: VIEWS[1] },
        'ui/resourceUri': VIEWS[1],
      });
      expect(
        Object.keys(meta)
          .filter((name) => meta[name] !== undefined)
          .sort(),
      ).toEqual(['get_document', 'search_knowledge']);
      // The additions are the whole difference: without them, the listing of before.
      const plain = (await legacy('tools/list')).body.result.tools as Json[];
      expect(listed.map(({ _meta, ...tool }: Json) => tool)).toEqual(plain);
    });

    it('a 2025 SDK without `extensions` may declare it under `experimental`', async () => {
      const { session } = await appsSession({ experimental: APPS_CAPABILITIES.extensions });
      expect(session).toMatch(/^apps-/);
    });

    it('resources/list leads with the views; later requests without the session id see none', async () => {
      const { session } = await appsSession();
      const listed = (await legacy('resources/list', {}, { 'Mcp-Session-Id': session! })).body
        .result.resources as Json[];
      expect(listed.slice(0, 2).map((r) => [r.uri, r.mimeType])).toEqual(
        VIEWS.map((uri) => [uri, 'text/html;profile=mcp-app']),
      );
      const plain = (await legacy('resources/list')).body.result.resources as Json[];
      expect(listed.slice(2)).toEqual(plain);
    });
  });

  describe('2026 era: declared in each request', () => {
    it('tools/list, resources/list and server/discover name the views for that request only', async () => {
      const tools = (await modern('tools/list', {}, APPS_CAPABILITIES)).result.tools as Json[];
      expect(tools.find((tool) => tool.name === 'search_knowledge')._meta.ui.resourceUri).toBe(
        VIEWS[0],
      );
      const resources = (await modern('resources/list', {}, APPS_CAPABILITIES)).result.resources;
      expect(resources.slice(0, 2).map((r: Json) => r.uri)).toEqual(VIEWS);
      const discover = (await modern('server/discover', {}, APPS_CAPABILITIES)).result;
      expect(discover.capabilities.extensions['io.modelcontextprotocol/ui']).toBeDefined();
      const plain = (await modern('tools/list')).result.tools as Json[];
      expect(plain.some((tool) => tool._meta !== undefined)).toBe(false);
    });
  });

  describe('the ui:// resources', () => {
    it.each(VIEWS)(
      '%s is one HTML document whose script and style run by hash only, reaching nothing outside',
      async (uri) => {
        const read = await modern('resources/read', { uri }, APPS_CAPABILITIES);
        const [content] = read.result.contents as Json[];
        expect(content.mimeType).toBe('text/html;profile=mcp-app');
        expect(content._meta.ui.csp).toEqual({
          connectDomains: [],
          resourceDomains: [],
          frameDomains: [],
          baseUriDomains: [],
        });
        const html = content.text as string;
        expect(html.startsWith('<!doctype html>')).toBe(true);
        const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(
          html,
        )?.[1];
        expect(policy).toBeDefined();
        expect(policy).not.toContain('unsafe-inline');
        expect(policy).not.toMatch(/https?:/);
        expect(policy).toContain("default-src 'none'");
        // Exactly one script, inline, and the policy names its hash.
        const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
        expect(scripts).toHaveLength(1);
        expect(scripts[0][1]).not.toContain('src=');
        const hash = createHash('sha256').update(scripts[0][2], 'utf8').digest('base64');
        expect(policy).toContain(`script-src 'sha256-${hash}'`);
      },
    );
  });

  describe('access policy', () => {
    it('an Apps host granted team-b/ lists and reads nothing of team-a/', async () => {
      const listed = await modern('resources/list', {}, APPS_CAPABILITIES, 'bob');
      const uris = (listed.result.resources as Json[]).map((r) => r.uri);
      expect(uris).toEqual([...VIEWS, 'kb://team-b/open.md']);
      const read = await modern(
        'resources/read',
        { uri: 'kb://team-a/secret.md' },
        APPS_CAPABILITIES,
        'bob',
      );
      expect(read.error.code).toBe(-32602);
      const doc = await modern(
        'tools/call',
        { name: 'get_document', arguments: { document_id: 'team-a/secret.md' } },
        APPS_CAPABILITIES,
        'bob',
      );
      expect(doc.result.isError).toBe(true);
      expect(JSON.stringify(doc)).not.toContain('Body of team-a');
    });
  });
});
