import { PROTOCOL_VERSION_META_KEY as SDK_META_KEY } from '@modelcontextprotocol/core/internal';
import { decodeHeaderValue } from '../transport/modern-request';
import { LEGACY_PROTOCOL_VERSIONS as SERVER_LEGACY } from '../transport/protocol-version';
import {
  encodeHeaderValue,
  LEGACY_PROTOCOL_VERSIONS,
  PROTOCOL_VERSION_META_KEY,
  relayHeaders,
} from './relay-headers';

const META = {
  [SDK_META_KEY]: '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

describe('relayHeaders', () => {
  it("holds the server's handshake revisions and the SDK's envelope key", () => {
    expect(LEGACY_PROTOCOL_VERSIONS).toEqual(SERVER_LEGACY);
    expect(PROTOCOL_VERSION_META_KEY).toBe(SDK_META_KEY);
  });

  it.each([
    ['before initialize', { method: 'tools/list' }, undefined, {}],
    [
      'after initialize',
      { method: 'tools/list' },
      '2025-06-18',
      { 'mcp-protocol-version': '2025-06-18' },
    ],
    [
      'a 2025 envelope',
      { method: 'ping', params: { _meta: { [SDK_META_KEY]: '2025-11-25' } } },
      '2025-11-25',
      { 'mcp-protocol-version': '2025-11-25' },
    ],
    ['a batch', [{ method: 'ping' }], '2025-11-25', { 'mcp-protocol-version': '2025-11-25' }],
    [
      'a 2026 request',
      { method: 'tools/list', params: { _meta: META } },
      '2025-11-25',
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
    ],
    [
      'a 2026 tool call',
      { method: 'tools/call', params: { name: 'get_document', _meta: META } },
      undefined,
      {
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'get_document',
      },
    ],
    [
      'a 2026 read of a URI that a header cannot hold',
      { method: 'resources/read', params: { uri: 'kb://notes/café.md', _meta: META } },
      undefined,
      {
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'resources/read',
        'mcp-name': '=?base64?a2I6Ly9ub3Rlcy9jYWbDqS5tZA==?=',
      },
    ],
    [
      'a future revision (the server answers which it speaks)',
      { method: 'ping', params: { _meta: { [SDK_META_KEY]: '2099-01-01' } } },
      undefined,
      { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'ping' },
    ],
  ])('mirrors %s', (_, message, legacy, expected) => {
    const { 'content-type': type, accept, ...mirrored } = relayHeaders(message, legacy);
    expect(type).toBe('application/json');
    expect(accept).toBe('application/json');
    expect(mirrored).toEqual(expected);
  });

  it('asks for SSE for subscriptions/listen, whose answer is a stream', () => {
    const message = { method: 'subscriptions/listen', params: { notifications: {} } };
    expect(relayHeaders(message, undefined).accept).toBe(
      'text/event-stream, application/json;q=0.5',
    );
  });

  it('asks for SSE when the request has a progress token', () => {
    const message = { method: 'tools/call', params: { name: 'x', _meta: { progressToken: 1 } } };
    expect(relayHeaders(message, undefined).accept).toBe(
      'text/event-stream, application/json;q=0.5',
    );
  });
});

describe('encodeHeaderValue', () => {
  it.each([
    'get_document',
    'kb://a/b.md',
    'a b',
    'café',
    ' padded',
    '',
    '=?base64?eA==?=',
    '中文\n',
  ])('round-trips %j through the server', (value) => {
    expect(decodeHeaderValue(encodeHeaderValue(value))).toBe(value);
  });

  it('keeps plain ASCII as it is', () => {
    expect(encodeHeaderValue('kb://notes/a.md')).toBe('kb://notes/a.md');
  });
});
