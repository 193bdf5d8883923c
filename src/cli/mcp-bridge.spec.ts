import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_AGENT_HEADER } from '../auth/local-agent';
import type { ServerAnnouncement } from '../local-server/server-announcement';
import { BridgeSession, ServerLink } from './mcp-bridge';
import { McpRelay } from './mcp-relay';

type Handler = (
  body: Record<string, unknown>,
  request: IncomingMessage,
  response: ServerResponse,
) => void;

/**
 * The session against a stand-in for the server's endpoint (real sockets, no application):
 * what it writes for each kind of answer, and how it follows the server's announcement.
 */
describe('BridgeSession', () => {
  let dir: string;
  let server: Server;
  let url: string;
  let handler: Handler;
  const seen: Array<{ body: Record<string, unknown>; headers: IncomingMessage['headers'] }> = [];
  const log = { info: jest.fn(), warn: jest.fn() };

  const announce = (token: string): ServerAnnouncement => {
    const announced = {
      pid: process.pid,
      url,
      version: 'test',
      started_at: '',
      database: 'embedded',
      local_token: token,
    };
    writeFileSync(join(dir, 'server.json'), JSON.stringify(announced));
    return announced;
  };

  function session(announced: ServerAnnouncement, apiKey?: string) {
    const lines: string[] = [];
    const relay = new McpRelay();
    const link = new ServerLink(
      { dataDir: dir, databaseUrl: undefined },
      '/mcp',
      apiKey,
      announced,
      log,
    );
    const bridge = new BridgeSession({ relay, link, write: (line) => void lines.push(line) });
    const messages = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    return { bridge, lines, messages, close: () => relay.close() };
  }

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/health/live') return void response.writeHead(200).end();
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString()));
      request.on('end', () => {
        const body = JSON.parse(text) as Record<string, unknown>;
        seen.push({ body, headers: request.headers });
        handler(body, request, response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bridge-'));
    seen.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const json = (response: ServerResponse, status: number, payload: unknown) =>
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));

  it('writes an SSE answer as lines, progress first, comments dropped', async () => {
    handler = (body, _request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const progress = {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 't', progress: 1 },
      };
      response.write(`: keepalive\n\nevent: message\ndata: ${JSON.stringify(progress)}\n\n`);
      response.end(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: {} })}\n\n`,
      );
    };
    const s = session(announce('tok'));
    s.bridge.receive(
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"t"}}}',
    );
    await s.bridge.drain();
    expect(s.messages()).toEqual([
      expect.objectContaining({ method: 'notifications/progress' }),
      { jsonrpc: '2.0', id: 7, result: {} },
    ]);
    expect(seen[0].headers.accept).toMatch(/^text\/event-stream/);
    expect(seen[0].headers[LOCAL_AGENT_HEADER]).toBe('tok');
    expect(seen[0].headers.authorization).toBeUndefined();
    s.close();
  });

  it('sends a key as Bearer, and the settled 2025 version after initialize', async () => {
    handler = (body, _request, response) =>
      json(response, 200, {
        jsonrpc: '2.0',
        id: body.id,
        result: body.method === 'initialize' ? { protocolVersion: '2025-06-18' } : {},
      });
    const s = session(announce('tok'), 'the-key');
    s.bridge.receive(
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}',
    );
    await s.bridge.drain();
    s.bridge.receive('{"jsonrpc":"2.0","id":2,"method":"ping"}');
    await s.bridge.drain();
    expect(seen.map((r) => r.headers['mcp-protocol-version'])).toEqual([undefined, '2025-06-18']);
    expect(seen[1].headers.authorization).toBe('Bearer the-key');
    expect(seen[1].headers[LOCAL_AGENT_HEADER]).toBeUndefined();
    s.close();
  });

  it('sends again with the new token when the server, started again, turned down the old one', async () => {
    handler = (body, request, response) =>
      request.headers[LOCAL_AGENT_HEADER] === 'new'
        ? json(response, 200, { jsonrpc: '2.0', id: body.id, result: {} })
        : json(response, 401, {
            jsonrpc: '2.0',
            id: null,
            error: { code: -32000, message: 'Unauthorized' },
          });
    const s = session(announce('old'));
    announce('new');
    s.bridge.receive('{"jsonrpc":"2.0","id":1,"method":"ping"}');
    await s.bridge.drain();
    expect(s.messages()).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    expect(seen).toHaveLength(2);

    // A token still announced is not sent again: the refusal is the answer.
    handler = (_body, _request, response) =>
      json(response, 401, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Unauthorized' },
      });
    s.bridge.receive('{"jsonrpc":"2.0","id":2,"method":"ping"}');
    await s.bridge.drain();
    expect(s.messages()[1]).toMatchObject({ id: null, error: { code: -32000 } });
    expect(seen).toHaveLength(3);
    s.close();
  });

  it('answers -32603 for what the server does not answer in JSON-RPC, and while it is gone', async () => {
    handler = (_body, _request, response) =>
      response.writeHead(502, { 'content-type': 'text/html' }).end('<html>');
    const s = session(announce('tok'));
    s.bridge.receive(
      '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]',
    );
    await s.bridge.drain();
    expect(s.messages()).toEqual(
      [1, 2].map((id) => ({
        jsonrpc: '2.0',
        id,
        error: {
          code: -32603,
          message: `Internal error: the Agent Data server at ${url} answered HTTP 502 without JSON-RPC`,
        },
      })),
    );

    rmSync(join(dir, 'server.json'));
    const gone = session({ ...announce('tok'), url: 'http://127.0.0.1:9' });
    rmSync(join(dir, 'server.json'));
    gone.bridge.receive('{"jsonrpc":"2.0","id":3,"method":"ping"}');
    await gone.bridge.drain();
    gone.bridge.receive('{"jsonrpc":"2.0","id":4,"method":"ping"}');
    await gone.bridge.drain();
    expect(gone.messages().map((m) => (m.error as { message: string }).message)).toEqual([
      'Internal error: the Agent Data server at http://127.0.0.1:9 did not answer (ECONNREFUSED)',
      `Internal error: no Agent Data server answers on DATA_DIR ${dir} (it was at http://127.0.0.1:9); agent-data mcp reaches it again once it runs`,
    ]);
    s.close();
    gone.close();
  });

  it('aborts a cancelled request, whose answer is never written, and drops nothing else', async () => {
    const closed: unknown[] = [];
    handler = (body, request, response) => {
      if (body.method === 'ping')
        return json(response, 200, { jsonrpc: '2.0', id: body.id, result: {} });
      request.socket.once('close', () => closed.push(body.id));
    };
    const s = session(announce('tok'));
    s.bridge.receive('{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"x"}}');
    await new Promise((resolve) => setTimeout(resolve, 50));
    s.bridge.receive(
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}',
    );
    s.bridge.receive('{"jsonrpc":"2.0","id":1,"method":"ping"}');
    await s.bridge.drain();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toEqual(['slow']);
    expect(s.messages()).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    expect(seen.map((r) => r.body.method)).toEqual(['tools/call', 'ping']);
    s.close();
  });
});
