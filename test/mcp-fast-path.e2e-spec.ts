import type { Express } from 'express';
import { startTestApp, TestApp } from './support/app';
import { comparable, type RawRequest, send } from './support/mcp-http';

const KEY = 'fast-path-key-0123456789';
const READONLY_KEY = 'fast-path-readonly-0123456';

const json = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};
const rpc = (method: string, params: object = {}, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

/** Requests that exercise every branch the guards, the controller and the filter take. */
const CASES: Array<[string, Omit<RawRequest, 'path'>]> = [
  [
    'tools/list',
    { method: 'POST', headers: { ...json, 'X-API-Key': KEY }, body: rpc('tools/list') },
  ],
  [
    'tools/list as one SSE event',
    {
      method: 'POST',
      headers: { ...json, Accept: 'text/event-stream', 'X-API-Key': KEY },
      body: rpc('tools/list'),
    },
  ],
  [
    'a tool call that fails (isError)',
    {
      method: 'POST',
      headers: { ...json, 'X-API-Key': KEY },
      body: rpc('tools/call', { name: 'get_document', arguments: { document_id: 'no/such.md' } }),
    },
  ],
  [
    '2026 server/discover',
    {
      method: 'POST',
      headers: {
        ...json,
        'X-API-Key': KEY,
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'server/discover',
      },
      body: rpc('server/discover', {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      }),
    },
  ],
  [
    'a notification (202)',
    {
      method: 'POST',
      headers: { ...json, 'X-API-Key': KEY },
      body: { jsonrpc: '2.0', method: 'notifications/initialized' },
    },
  ],
  ['no key (401)', { method: 'POST', headers: json, body: rpc('tools/list') }],
  [
    'a wrong key (401)',
    {
      method: 'POST',
      headers: { ...json, 'X-API-Key': 'wrong-key-0000000000000' },
      body: rpc('tools/list'),
    },
  ],
  [
    'a key without the profile (403)',
    { method: 'POST', headers: { ...json, 'X-API-Key': READONLY_KEY }, body: rpc('tools/list') },
  ],
  [
    'a foreign Origin (403)',
    {
      method: 'POST',
      headers: { ...json, 'X-API-Key': KEY, Origin: 'https://evil.example' },
      body: rpc('tools/list'),
    },
  ],
  [
    'an allowed Origin (CORS headers)',
    {
      method: 'POST',
      headers: { ...json, 'X-API-Key': KEY, Origin: 'http://localhost:6274' },
      body: rpc('tools/list'),
    },
  ],
  [
    'malformed JSON (400)',
    { method: 'POST', headers: { ...json, 'X-API-Key': KEY }, body: '{"jsonrpc":' },
  ],
  [
    'a wrong Content-Type (415)',
    {
      method: 'POST',
      headers: { ...json, 'Content-Type': 'text/plain', 'X-API-Key': KEY },
      body: 'x',
    },
  ],
  [
    'no acceptable framing (406)',
    {
      method: 'POST',
      headers: { ...json, Accept: 'text/html', 'X-API-Key': KEY },
      body: rpc('tools/list'),
    },
  ],
  ['GET info', { method: 'GET', headers: { Accept: 'application/json', 'X-API-Key': KEY } }],
  [
    'GET for a stream (405)',
    { method: 'GET', headers: { Accept: 'text/event-stream', 'X-API-Key': KEY } },
  ],
  ['DELETE (405)', { method: 'DELETE', headers: { 'X-API-Key': KEY } }],
  ['OPTIONS preflight', { method: 'OPTIONS', headers: { Origin: 'http://localhost:6274' } }],
];

/**
 * The MCP endpoints' fast path (src/mcp/mcp-fast-path.ts) answers exactly what the Nest
 * route it stands in front of answers. `/mcp/` (trailing slash) is not an exact endpoint
 * path, so the fast path leaves it to the Nest route, which Express matches all the same.
 */
describe('MCP fast path', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      API_KEYS: `fast:${KEY}:internal,readonly;ro:${READONLY_KEY}:readonly`,
      ALLOWED_ORIGINS: 'http://localhost:6274',
      MAX_REQUEST_BYTES: '4096',
    });
  });
  afterAll(() => t.close());
  afterEach(() => jest.restoreAllMocks());

  it.each(CASES)('%s: the same answer as the Nest route', async (_name, request) => {
    // Express's router sees the request on the Nest route, not on the fast path.
    const express = t.app.getHttpAdapter().getInstance() as Express & { handle: () => void };
    const nestRoute = jest.spyOn(express, 'handle');
    const fast = await send(t.baseUrl, { ...request, path: '/mcp' });
    expect(nestRoute).not.toHaveBeenCalled();
    const routed = await send(t.baseUrl, { ...request, path: '/mcp/' });
    expect(nestRoute).toHaveBeenCalled();
    expect(comparable(fast)).toEqual(comparable(routed));
  });

  it('labels its requests with the route template in the HTTP metrics', async () => {
    await send(t.baseUrl, {
      method: 'POST',
      path: '/readonly/mcp',
      headers: { ...json, 'X-API-Key': KEY },
      body: rpc('tools/list'),
    });
    const metrics = await send(t.baseUrl, { path: '/metrics', headers: { 'X-API-Key': KEY } });
    expect(metrics.text).toMatch(
      /http_request_duration_seconds_count\{[^}]*route="\/readonly\/mcp"[^}]*status="200"[^}]*\} [1-9]/,
    );
  });
});
