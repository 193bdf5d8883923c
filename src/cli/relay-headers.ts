import type { OutgoingHttpHeaders } from 'node:http';

// What an HTTP client must send beside a JSON-RPC message to the MCP endpoint
// (docs/mcp.md), for `agent-data mcp` relaying stdio messages to a server. The two
// constants are the server's own (src/transport/protocol-version.ts, the SDK's
// PROTOCOL_VERSION_META_KEY), written out because those modules load the SDK's schemas;
// relay-headers.spec.ts fails when they drift apart.

/** The `initialize`-based revisions: a request whose envelope names one is of the 2025 era. */
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = [
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
];
/** The `_meta` key of a 2026-era request's protocol version. */
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/** Methods whose `Mcp-Name` header mirrors a body field (2026-07-28, Standard Request Headers). */
const NAME_SOURCES: Readonly<Record<string, 'name' | 'uri'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';

/**
 * The headers of one POST carrying `message` (one message or a batch):
 *
 * - a 2026-era request (its `_meta` names a revision that is not a handshake one, the
 *   server's own rule) mirrors that version in `MCP-Protocol-Version`, its method in
 *   `Mcp-Method` and, for the methods that have one, its name or URI in `Mcp-Name`;
 * - anything else speaks the 2025 rules: `MCP-Protocol-Version` is the version the
 *   session's `initialize` settled (`legacyVersion`), absent before, as for an HTTP client.
 *
 * A request with a progress token asks for an SSE answer, so that its progress
 * notifications arrive before the result, and so does `subscriptions/listen`, whose answer is
 * a stream of notifications until it is cancelled; others ask for JSON.
 */
export function relayHeaders(
  message: unknown,
  legacyVersion: string | undefined,
): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {
    'content-type': 'application/json',
    accept:
      meta(message)?.progressToken === undefined && !isListen(message)
        ? 'application/json'
        : 'text/event-stream, application/json;q=0.5',
  };
  const claim = meta(message)?.[PROTOCOL_VERSION_META_KEY];
  const modern =
    claim !== undefined && !(typeof claim === 'string' && LEGACY_PROTOCOL_VERSIONS.includes(claim));
  if (!modern) {
    if (legacyVersion !== undefined) headers['mcp-protocol-version'] = legacyVersion;
    return headers;
  }
  // A value no header can carry is left out: the server then refuses the request for the
  // missing header, with its id, as it would an HTTP client's.
  if (typeof claim === 'string' && isFieldValue(claim)) headers['mcp-protocol-version'] = claim;
  const { method, params } = message as { method?: unknown; params?: Record<string, unknown> };
  if (typeof method !== 'string') return headers;
  if (isFieldValue(method)) headers['mcp-method'] = method;
  const source = Object.hasOwn(NAME_SOURCES, method) ? NAME_SOURCES[method] : undefined;
  const name = source === undefined ? undefined : params?.[source];
  if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);
  return headers;
}

/**
 * A mirrored value as a header carries it: as it is when it is plain visible ASCII,
 * else `=?base64?<UTF-8 in base64>?=` (also when it already looks like that, or has
 * whitespace at either end, which header parsing would strip). The SDK's client encodes
 * the same way; the server decodes it (`decodeHeaderValue`).
 */
export function encodeHeaderValue(value: string): string {
  const plain =
    value !== '' &&
    value === value.trim() &&
    /^[\t\x20-\x7e]*$/.test(value) &&
    !(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX));
  return plain
    ? value
    : `${BASE64_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${BASE64_SUFFIX}`;
}

/** Visible ASCII, space and tab: what a header value may hold. */
function isFieldValue(value: string): boolean {
  return /^[\t\x20-\x7e]*$/.test(value) && value === value.trim() && value !== '';
}

function meta(message: unknown): Record<string, unknown> | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const params = (message as { params?: unknown }).params;
  if (typeof params !== 'object' || params === null) return undefined;
  const value = (params as { _meta?: unknown })._meta;
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** Whether `message` is a `subscriptions/listen` request (answered with a stream). */
function isListen(message: unknown): boolean {
  return (
    message !== null &&
    typeof message === 'object' &&
    (message as { method?: unknown }).method === 'subscriptions/listen'
  );
}
