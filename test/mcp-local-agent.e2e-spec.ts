import request from 'supertest';
import { KEY_REQUIRED_BY_POLICY, LOCAL_AGENT_HEADER } from '../src/auth/local-agent';
import { startTestApp, type TestApp } from './support/app';
import { post, rpc } from './support/mcp-http';

const LOCAL = 'local-agent-token-0123456789abcdef';
const READER = 'reader-key-0123456789abcdef';
const API_KEYS = `reader:${READER}:readonly`;

/**
 * An agent on the server's machine relaying MCP without an API key (`agent-data mcp` with a
 * server on its DATA_DIR) shows the token of DATA_DIR/server.json: it is the local user on
 * the MCP endpoints, as it would be in-process, unless an access policy is in force.
 */
describe('MCP for a local agent showing the token of DATA_DIR/server.json', () => {
  describe('with API keys and no access policy', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ API_KEYS, AGENT_DATA_LOCAL_TOKEN: LOCAL });
    });
    afterAll(() => t.close());

    it.each(['/mcp', '/readonly/mcp', '/gpt-full/mcp'])(
      'admits it on %s as the local user',
      async (path) => {
        const response = await post(t.baseUrl, path, rpc('tools/list'), {
          Accept: 'application/json',
          [LOCAL_AGENT_HEADER]: LOCAL,
        });
        expect(response.status).toBe(200);
        expect(
          (response.body as { result: { tools: unknown[] } }).result.tools.length,
        ).toBeGreaterThan(0);
      },
    );

    it.each([
      ['a wrong token', { [LOCAL_AGENT_HEADER]: 'not-the-token' }],
      [
        'the token beside a wrong key (a key decides alone)',
        { [LOCAL_AGENT_HEADER]: LOCAL, 'X-API-Key': 'wrong-key-0123456789' },
      ],
    ])('refuses %s with 401', async (_, headers) => {
      const response = await post(t.baseUrl, '/mcp', rpc('tools/list'), {
        Accept: 'application/json',
        ...headers,
      });
      expect(response.status).toBe(401);
    });

    it('keeps the token to the MCP endpoints: the admin API still asks for a key', async () => {
      await request(t.baseUrl).get('/documents').set(LOCAL_AGENT_HEADER, LOCAL).expect(401);
    });
  });

  it('refuses it under an access policy, saying a key is needed', async () => {
    const t = await startTestApp({
      API_KEYS,
      AGENT_DATA_LOCAL_TOKEN: LOCAL,
      ACCESS_POLICY: JSON.stringify({ rules: [{ who: ['key:reader'], read: ['a/'] }] }),
    });
    try {
      const response = await post(t.baseUrl, '/mcp', rpc('ping'), {
        Accept: 'application/json',
        [LOCAL_AGENT_HEADER]: LOCAL,
      });
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({
        error: { code: -32000, message: `Unauthorized: ${KEY_REQUIRED_BY_POLICY}` },
      });
    } finally {
      await t.close();
    }
  });
});
