import http from 'node:http';

/**
 * A decoded JSON body of any shape. Tests read into it freely and check it with
 * toEqual / toMatchObject, which is where the shape is asserted.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type Json = any;

/** The four profile routes and their tool counts (docs/mcp.md). */
export const MCP_ROUTES = [
  { path: '/mcp', profile: 'internal', tools: 11 },
  { path: '/mcp-readonly', profile: 'readonly', tools: 6 },
  { path: '/mcp-gpt', profile: 'gpt', tools: 9 },
  { path: '/mcp-gpt-full', profile: 'gpt-full', tools: 11 },
] as const;

/** The routes MCP clients recognise by their `/mcp` ending, beside the first three (docs/mcp.md). */
export const MCP_ALIAS_ROUTES = [
  { path: '/readonly/mcp', profile: 'readonly', tools: 6 },
  { path: '/gpt/mcp', profile: 'gpt', tools: 9 },
  { path: '/gpt-full/mcp', profile: 'gpt-full', tools: 11 },
] as const;

/** Every MCP route: the four profile routes and their aliases. */
export const ALL_MCP_ROUTES = [...MCP_ROUTES, ...MCP_ALIAS_ROUTES];

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or the data of the single SSE event; `undefined` when empty. */
  body: Json;
}

export interface RawRequest {
  method?: string;
  path: string;
  /** Exactly these headers are sent (nothing is added but Host, Content-Length, Connection). */
  headers?: Record<string, string | string[]>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
}

/**
 * One HTTP request with full control over the headers (fetch adds `Accept: *\/*`, which
 * would hide the "no Accept" cases).
 */
export function send(baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const url = new URL(request.path, baseUrl);
  const payload =
    request.body === undefined
      ? undefined
      : typeof request.body === 'string' || Buffer.isBuffer(request.body)
        ? request.body
        : JSON.stringify(request.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: request.method ?? (payload === undefined ? 'GET' : 'POST'),
        headers: {
          ...(payload !== undefined ? { 'Content-Length': Buffer.byteLength(payload) } : {}),
          ...request.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            body: decode(res.headers, text),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

function decode(headers: http.IncomingHttpHeaders, text: string): unknown {
  if (text === '') return undefined;
  if ((headers['content-type'] ?? '').startsWith('text/event-stream'))
    return sseEvents(text)[0]?.data;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The events of an SSE body: `event` name and JSON `data` of each. Comment-only blocks
 * (`: keepalive`) are not events.
 */
export function sseEvents(text: string): Array<{ event: string | undefined; data: unknown }> {
  return text
    .split('\n\n')
    .filter((block) => block.split('\n').some((line) => line !== '' && !line.startsWith(':')))
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice('event: '.length);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice('data: '.length))
        .join('\n');
      return { event, data: JSON.parse(data) };
    });
}

let nextId = 1;

/** A JSON-RPC request envelope. */
export function rpc(
  method: string,
  params?: Record<string, unknown>,
  id: string | number = nextId++,
) {
  return { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) };
}

export const JSON_POST = { 'Content-Type': 'application/json', Accept: 'application/json' };

/** POSTs one JSON-RPC body with JSON content type and the given extra headers. */
export function post(
  baseUrl: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = { Accept: 'application/json' },
): Promise<RawResponse> {
  return send(baseUrl, {
    method: 'POST',
    path,
    headers: { 'Content-Type': 'application/json', ...headers },
    body,
  });
}

/** Calls a tool over raw HTTP and returns the JSON-RPC envelope. */
export async function callTool(
  baseUrl: string,
  path: string,
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Json> {
  const response = await post(baseUrl, path, rpc('tools/call', { name, arguments: args }), {
    Accept: 'application/json',
    ...headers,
  });
  if (response.status !== 200)
    throw new Error(`tools/call ${name}: HTTP ${response.status} ${response.text}`);
  return response.body;
}

/** The JSON of a tool result's text item (what `structuredContent` holds on success). */
export function toolJson(envelope: Json): Json {
  const text = envelope.result?.content?.[0]?.text;
  if (typeof text !== 'string') throw new Error(`not a tool result: ${JSON.stringify(envelope)}`);
  return JSON.parse(text);
}

/**
 * What two answers to the same request must share to be the same answer: status, body,
 * and every header but the per-request ones (date, request id, connection handling).
 */
export function comparable(response: RawResponse) {
  const headers = { ...response.headers };
  for (const name of ['date', 'x-request-id', 'connection', 'keep-alive']) delete headers[name];
  return { status: response.status, headers, text: response.text };
}
