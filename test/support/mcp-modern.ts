import { post, type RawResponse } from './mcp-http';

export const MODERN = '2026-07-28';

/** The per-request `_meta` envelope of a 2026-07-28 request. */
export const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'agent-data-tests', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

let nextId = 1000;

/** The headers a conforming 2026 client sends for `method` (and `name`, when mirrored). */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': method,
    ...(name === undefined ? {} : { 'Mcp-Name': name }),
  };
}

/**
 * POSTs a conforming 2026-07-28 request: envelope in `params._meta`, mirrored headers.
 * `headers` are merged over the conforming ones (a header set to '' is left out), `meta`
 * over the envelope.
 */
export function modernPost(
  baseUrl: string,
  path: string,
  method: string,
  params: Record<string, unknown> = {},
  options: {
    headers?: Record<string, string>;
    meta?: Record<string, unknown>;
    id?: string | number;
  } = {},
): Promise<RawResponse> {
  const name =
    typeof params.name === 'string'
      ? params.name
      : typeof params.uri === 'string'
        ? params.uri
        : undefined;
  const mirrored = ['tools/call', 'prompts/get', 'resources/read'].includes(method)
    ? name
    : undefined;
  const headers = Object.fromEntries(
    Object.entries({ ...modernHeaders(method, mirrored), ...options.headers }).filter(
      ([, value]) => value !== '',
    ),
  );
  return post(
    baseUrl,
    path,
    {
      jsonrpc: '2.0',
      id: options.id ?? nextId++,
      method,
      params: { ...params, _meta: { ...ENVELOPE, ...options.meta } },
    },
    headers,
  );
}
