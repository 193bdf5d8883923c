import { startTestApp, TestApp } from './support/app';
import { MCP_ROUTES, post, rpc, send, sseEvents, type Json } from './support/mcp-http';

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

// The predecessor's Accept matrix (reference 000, U1–U21) on every profile route, with 202
// where it answered 204 (docs/mcp.md).
describe.each(MCP_ROUTES)('Accept negotiation on $path (U1–U21)', ({ path, tools }) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const toolsList = (accept?: string) =>
    post(t.baseUrl, path, rpc('tools/list', {}, 1), accept === undefined ? {} : { Accept: accept });

  function expectJson(response: Awaited<ReturnType<typeof toolsList>>) {
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toMatchObject({ jsonrpc: '2.0', id: 1 });
    expect(response.body.result.tools).toHaveLength(tools);
  }

  function expectSse(response: Awaited<ReturnType<typeof toolsList>>) {
    expect(response.status).toBe(200);
    expect(response.headers).toMatchObject(SSE_HEADERS);
    const events = sseEvents(response.text);
    expect(events).toHaveLength(1);
    expect(events[0].event).toBe('message');
    expect(response.text).toMatch(/^event: message\ndata: \{.*\}\n\n$/);
    expect(events[0].data).toMatchObject({ jsonrpc: '2.0', id: 1 });
    expect((events[0].data as Json).result.tools).toHaveLength(tools);
  }

  it('U1 Accept: application/json → JSON', async () =>
    expectJson(await toolsList('application/json')));
  it('U2 application/json, text/event-stream → JSON (tie goes to JSON)', async () =>
    expectJson(await toolsList('application/json, text/event-stream')));
  it('U3 text/event-stream → one SSE event', async () =>
    expectSse(await toolsList('text/event-stream')));
  it('U4 application/json;q=0.5, text/event-stream;q=1 → SSE', async () =>
    expectSse(await toolsList('application/json;q=0.5, text/event-stream;q=1')));
  it('U5 application/json;q=1, text/event-stream;q=0.5 → JSON', async () =>
    expectJson(await toolsList('application/json;q=1, text/event-stream;q=0.5')));
  it('U6 no Accept → JSON', async () => expectJson(await toolsList()));
  it('U7 ;;;malformed → JSON', async () => expectJson(await toolsList(';;;malformed')));
  it('U8 */* → JSON', async () => expectJson(await toolsList('*/*')));

  it('U9 application/xml → 406 as a JSON-RPC error in JSON', async () => {
    const response = await toolsList('application/xml');
    expect(response.status).toBe(406);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    expect(response.body.error.message).toMatch(/Not Acceptable/);
  });

  it(`U10 tools/list lists exactly ${tools} tools`, async () => {
    const response = await toolsList('application/json');
    const names = response.body.result.tools.map((tool: { name: string }) => tool.name);
    expect(new Set(names).size).toBe(tools);
    expect(names).not.toContain('move_document');
  });

  it.each(['application/json', 'text/event-stream', 'application/xml', undefined])(
    'U11/U12 a notification with Accept %p → 202, empty body',
    async (accept) => {
      const response = await post(
        t.baseUrl,
        path,
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        accept === undefined ? {} : { Accept: accept },
      );
      expect(response.status).toBe(202);
      expect(response.text).toBe('');
      expect(response.headers['content-type']).toBeUndefined();
    },
  );

  it('U13 malformed JSON with a JSON Accept → 400 -32700 in JSON', async () => {
    const response = await post(t.baseUrl, path, '{"jsonrpc": "2.0", "id": 1,', {
      Accept: 'application/json',
    });
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('U14 malformed JSON with an SSE Accept → 400 -32700 framed as one SSE event', async () => {
    const response = await post(t.baseUrl, path, 'not json', { Accept: 'text/event-stream' });
    expect(response.status).toBe(400);
    expect(response.headers).toMatchObject(SSE_HEADERS);
    const events = sseEvents(response.text);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event: 'message',
      data: { id: null, error: { code: -32700 } },
    });
  });

  it('U15 tools/call list_documents over SSE → a valid frame with items', async () => {
    const created = await post(
      t.baseUrl,
      path,
      rpc('tools/call', { name: 'list_documents', arguments: {} }, 9),
      {
        Accept: 'text/event-stream',
      },
    );
    expect(created.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const [event] = sseEvents(created.text);
    const data = event.data as Json;
    expect(data.id).toBe(9);
    expect(data.result.isError).toBeUndefined();
    expect(data.result.structuredContent).toMatchObject({ items: [], count: 0, next_offset: null });
  });

  it('U16 GET with an SSE-only Accept → 405, Allow: POST', async () => {
    const response = await send(t.baseUrl, { path, headers: { Accept: 'text/event-stream' } });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
  });

  it.each(['application/json', undefined, '*/*', 'application/json, text/event-stream'])(
    'U17/U18 GET with Accept %p → 200 JSON info',
    async (accept) => {
      const response = await send(t.baseUrl, {
        path,
        headers: accept === undefined ? {} : { Accept: accept },
      });
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.body).toMatchObject({
        name: 'agent-data',
        version: expect.stringMatching(/^\d+\.\d+\.\d+/),
        tool_count: tools,
        protocol_versions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
      });
    },
  );

  it('U19/U20 initialize over SSE', async () => {
    const response = await post(
      t.baseUrl,
      path,
      rpc(
        'initialize',
        {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'x', version: '1' },
        },
        3,
      ),
      { Accept: 'text/event-stream' },
    );
    expect(response.headers).toMatchObject(SSE_HEADERS);
    expect(sseEvents(response.text)[0].data).toMatchObject({
      id: 3,
      result: { protocolVersion: '2025-06-18', serverInfo: { name: 'agent-data' } },
    });
  });

  it('U21 SSE answers carry no-cache, no-transform and X-Accel-Buffering: no', async () => {
    const response = await toolsList('text/event-stream');
    expect(response.headers['cache-control']).toBe('no-cache, no-transform');
    expect(response.headers['x-accel-buffering']).toBe('no');
  });
});

describe('MCP_POST_SSE=false', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ MCP_POST_SSE: 'false' });
  });
  afterAll(() => t.close());

  it.each(['text/event-stream', 'application/json;q=0.1, text/event-stream', 'application/xml'])(
    'answers JSON to Accept %p',
    async (accept) => {
      const response = await post(t.baseUrl, '/mcp', rpc('ping', undefined, 1), { Accept: accept });
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    },
  );

  it('still frames a parse error as JSON and says so in GET info', async () => {
    const bad = await post(t.baseUrl, '/mcp', '{', { Accept: 'text/event-stream' });
    expect(bad.headers['content-type']).toBe('application/json; charset=utf-8');
    const info = await send(t.baseUrl, { path: '/mcp' });
    expect(info.body.post_sse).toBe(false);
  });
});
