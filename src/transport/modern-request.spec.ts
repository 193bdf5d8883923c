import type { IncomingHttpHeaders } from 'node:http';
import { classify } from './json-rpc-messages';
import {
  checkModernMessage,
  decodeHeaderValue,
  HEADER_MISMATCH,
  isModernRequest,
  type ModernMessage,
  UNSUPPORTED_PROTOCOL_VERSION,
} from './modern-request';

const V = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
};

const NO_META = Symbol('no _meta');

function request(method: string, params: Record<string, unknown> = {}, meta: unknown = META) {
  return {
    jsonrpc: '2.0',
    id: 7,
    method,
    params: meta === NO_META ? params : { ...params, _meta: meta },
  };
}

function headersFor(method: string, extra: IncomingHttpHeaders = {}): IncomingHttpHeaders {
  return { 'mcp-protocol-version': V, 'mcp-method': method, ...extra };
}

function check(headers: IncomingHttpHeaders, body: unknown): ModernMessage {
  return checkModernMessage(headers, classify(body));
}

function refusal(result: ModernMessage): {
  code: number;
  id: unknown;
  message: string;
  data?: unknown;
} {
  if (result.kind !== 'refused') throw new Error(`not refused: ${JSON.stringify(result)}`);
  expect(result.status).toBe(400);
  return { ...result.error.error, id: result.error.id };
}

describe('which era serves a POST', () => {
  it.each([
    ['no header, no envelope', {}, request('tools/list', {}, NO_META), false],
    [
      'a handshake header',
      { 'mcp-protocol-version': '2025-06-18' },
      request('ping', {}, NO_META),
      false,
    ],
    [
      'an unknown non-date header',
      { 'mcp-protocol-version': 'garbage' },
      request('ping', {}, NO_META),
      false,
    ],
    [
      'the 2024-10-07 draft',
      { 'mcp-protocol-version': '2024-10-07' },
      request('ping', {}, NO_META),
      false,
    ],
    ['the 2026 header', { 'mcp-protocol-version': V }, request('ping', {}, NO_META), true],
    ['the 2026 header with whitespace', { 'mcp-protocol-version': ` ${V}\t` }, {}, true],
    ['a later date', { 'mcp-protocol-version': '2027-01-01' }, {}, true],
    ['an envelope without header', {}, request('tools/list'), true],
    [
      'an envelope naming an unknown version',
      {},
      request('x', {}, { 'io.modelcontextprotocol/protocolVersion': 'v999' }),
      true,
    ],
    [
      'an envelope naming a handshake version',
      {},
      request('x', {}, { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' }),
      false,
    ],
    ['a batch with an envelope', {}, [request('tools/list')], true],
    ['a plain batch', {}, [request('tools/list', {}, NO_META)], false],
  ])('%s → modern %p', (_name, headers, body, modern) => {
    expect(isModernRequest(headers as IncomingHttpHeaders, body)).toBe(modern);
  });
});

describe('2026-07-28 request checks', () => {
  it('accepts a conforming request and reads its envelope', () => {
    const result = check(
      headersFor('tools/list'),
      request(
        'tools/list',
        {},
        {
          ...META,
          progressToken: 'p1',
          'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
        },
      ),
    );
    expect(result).toMatchObject({
      kind: 'request',
      request: { id: 7, method: 'tools/list' },
      envelope: {
        protocolVersion: V,
        clientCapabilities: {},
        clientInfo: { name: 'c', version: '1' },
      },
    });
    // Other _meta keys (the progress token) stay in the request for the method to read.
    expect(result.kind === 'request' && result.request.params?._meta?.progressToken).toBe('p1');
  });

  it('serves a request without clientInfo (optional)', () => {
    expect(check(headersFor('server/discover'), request('server/discover')).kind).toBe('request');
  });

  it.each([
    ['no _meta', NO_META, /params\._meta is required/],
    [
      'no protocolVersion',
      { 'io.modelcontextprotocol/clientCapabilities': {} },
      /protocolVersion"\] is required/,
    ],
    [
      'protocolVersion not a string',
      { ...META, 'io.modelcontextprotocol/protocolVersion': 5 },
      /must be a protocol version string/,
    ],
    [
      'no clientCapabilities',
      { 'io.modelcontextprotocol/protocolVersion': V },
      /clientCapabilities"\] is required/,
    ],
    [
      'clientCapabilities not an object',
      { ...META, 'io.modelcontextprotocol/clientCapabilities': [] },
      /clientCapabilities"\]: /,
    ],
    [
      'a capability of the wrong type',
      { ...META, 'io.modelcontextprotocol/clientCapabilities': { sampling: 3 } },
      /clientCapabilities"\]\.sampling: /,
    ],
    [
      'clientInfo without version',
      { ...META, 'io.modelcontextprotocol/clientInfo': { name: 'x' } },
      /clientInfo"\]\.version: /,
    ],
    [
      'an unknown log level',
      { ...META, 'io.modelcontextprotocol/logLevel': 'loud' },
      /logLevel"\] must be one of debug/,
    ],
  ])('%s → -32602 naming it, with the request id', (_name, meta, message) => {
    const error = refusal(
      check(headersFor('server/discover'), request('server/discover', {}, meta)),
    );
    expect(error).toMatchObject({ id: 7, code: -32602 });
    expect(error.message).toMatch(message);
  });

  it('an unsupported version header → -32022 first, whatever the envelope holds', () => {
    const error = refusal(
      check(
        headersFor('tools/list', { 'mcp-protocol-version': '2099-01-01' }),
        request('tools/list', {}, NO_META),
      ),
    );
    expect(error).toMatchObject({
      id: 7,
      code: UNSUPPORTED_PROTOCOL_VERSION,
      data: { requested: '2099-01-01' },
    });
  });

  it('a handshake-era header with a 2026 envelope → -32020 (they disagree)', () => {
    const error = refusal(
      check(
        headersFor('tools/list', { 'mcp-protocol-version': '2025-11-25' }),
        request('tools/list'),
      ),
    );
    expect(error).toMatchObject({ id: 7, code: HEADER_MISMATCH });
  });

  it('a missing MCP-Protocol-Version header → -32020', () => {
    const error = refusal(check({ 'mcp-method': 'tools/list' }, request('tools/list')));
    expect(error).toMatchObject({ id: 7, code: HEADER_MISMATCH });
    expect(error.message).toMatch(/MCP-Protocol-Version header is required .*2026-07-28/);
  });

  it('a header that disagrees with _meta → -32020, before the version is judged', () => {
    const meta = { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' };
    const error = refusal(
      check(headersFor('server/discover'), request('server/discover', {}, meta)),
    );
    expect(error).toMatchObject({ id: 7, code: HEADER_MISMATCH });
    expect(error.message).toMatch(/"2026-07-28" does not match .*"v999\.0\.0"/);
  });

  it('an unsupported version in both → -32022 with the supported list and the requested one', () => {
    const meta = { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' };
    const error = refusal(
      check(
        headersFor('server/discover', { 'mcp-protocol-version': '2099-01-01' }),
        request('server/discover', {}, meta),
      ),
    );
    expect(error).toMatchObject({
      id: 7,
      code: UNSUPPORTED_PROTOCOL_VERSION,
      data: {
        supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
        requested: '2099-01-01',
      },
    });
  });

  it.each([
    ['missing', {}, /Mcp-Method header is required/],
    [
      'different',
      { 'mcp-method': 'prompts/list' },
      /"prompts\/list" does not match body method "tools\/list"/,
    ],
    ['upper-cased value', { 'mcp-method': 'TOOLS/LIST' }, /does not match/],
    [
      'a control character',
      { 'mcp-method': 'tools/list\u0001' },
      /characters a header value may not/,
    ],
  ])('Mcp-Method %s → -32020', (_name, extra, message) => {
    const headers: IncomingHttpHeaders = { 'mcp-protocol-version': V, ...extra };
    const error = refusal(check(headers, request('tools/list')));
    expect(error).toMatchObject({ id: 7, code: HEADER_MISMATCH });
    expect(error.message).toMatch(message);
  });

  it('ignores optional whitespace around header values', () => {
    const headers = {
      'mcp-protocol-version': ` ${V} `,
      'mcp-method': '\ttools/call ',
      'mcp-name': '  get_document  ',
    };
    expect(check(headers, request('tools/call', { name: 'get_document' })).kind).toBe('request');
  });

  it.each([
    ['tools/call', { name: 'get_document' }, 'get_document'],
    ['prompts/get', { name: 'review_document' }, 'review_document'],
    ['resources/read', { uri: 'kb://a/b.md' }, 'kb://a/b.md'],
  ])('%s needs Mcp-Name mirroring the body', (method, params, value) => {
    expect(check(headersFor(method, { 'mcp-name': value }), request(method, params)).kind).toBe(
      'request',
    );
    const missing = refusal(check(headersFor(method), request(method, params)));
    expect(missing).toMatchObject({ code: HEADER_MISMATCH, id: 7 });
    expect(missing.message).toMatch(/Mcp-Name header is required/);
    const wrong = refusal(
      check(headersFor(method, { 'mcp-name': 'other' }), request(method, params)),
    );
    expect(wrong.message).toMatch(/"other" does not match body params\./);
  });

  it('decodes a base64 Mcp-Name before comparing', () => {
    const uri = 'kb://wiki/Grüße über alles.md';
    const encoded = `=?base64?${Buffer.from(uri).toString('base64')}?=`;
    const body = request('resources/read', { uri });
    expect(check(headersFor('resources/read', { 'mcp-name': encoded }), body).kind).toBe('request');
    const bad = refusal(
      check(headersFor('resources/read', { 'mcp-name': '=?base64?SGVsbG8?=' }), body),
    );
    expect(bad.message).toMatch(/invalid =\?base64\?/);
  });

  it('leaves a body without the mirrored field to the method check', () => {
    expect(check(headersFor('tools/call'), request('tools/call', {})).kind).toBe('request');
  });

  it('refuses a raw non-ASCII Mcp-Name (it must be base64-encoded)', () => {
    const error = refusal(
      check(
        headersFor('tools/call', { 'mcp-name': 'caf\u00e9' }),
        request('tools/call', { name: 'café' }),
      ),
    );
    expect(error.message).toMatch(/characters a header value may not/);
  });

  it('accepts notifications (202) unless Mcp-Method contradicts them', () => {
    const note = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } };
    expect(check(headersFor('notifications/cancelled'), note)).toEqual({ kind: 'notification' });
    expect(check({ 'mcp-protocol-version': V }, note)).toEqual({ kind: 'notification' });
    expect(refusal(check(headersFor('tools/list'), note))).toMatchObject({
      id: null,
      code: HEADER_MISMATCH,
    });
  });

  it('refuses a _meta that is not an object as a malformed request', () => {
    const error = refusal(check(headersFor('tools/list'), request('tools/list', {}, 'x')));
    expect(error).toMatchObject({
      id: 7,
      code: -32600,
      message: 'Invalid Request: params._meta must be a JSON object',
    });
  });

  it('refuses client responses and malformed messages with -32600', () => {
    expect(refusal(check(headersFor('x'), { jsonrpc: '2.0', id: 3, result: {} }))).toMatchObject({
      id: null,
      code: -32600,
    });
    expect(refusal(check(headersFor('x'), { jsonrpc: '2.0', id: 4, method: 5 }))).toMatchObject({
      id: 4,
      code: -32600,
    });
  });
});

describe('mirrored header values', () => {
  it.each([
    ['us-west1', 'us-west1'],
    ['=?base64?SGVsbG8sIOS4lueVjA==?=', 'Hello, 世界'],
    ['=?base64?IHBhZGRlZCA=?=', ' padded '],
    ['=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=', '=?base64?literal?='],
    ['=?base64??=', ''],
    ['SGVsbG8=', 'SGVsbG8='],
    ['=?base64?SGVsbG8=', '=?base64?SGVsbG8='],
  ])('%p → %p', (header, value) => {
    expect(decodeHeaderValue(header)).toBe(value);
  });

  it.each([
    '=?base64?SGVsbG8?=',
    '=?base64?SGVs!!!bG8=?=',
    '=?base64?SGVsbG9=?=',
    '=?base64?/w==?=',
  ])('refuses %p (bad padding, alphabet, padding bits or UTF-8)', (header) => {
    expect(decodeHeaderValue(header)).toBeUndefined();
  });
});
