/** A framed HTTP answer: status, headers and body bytes, ready to be written. */
export interface FramedResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/** Headers that keep proxies (nginx and friends) from buffering or rewriting an SSE answer. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': SSE_CONTENT_TYPE,
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
};

/**
 * A JSON-RPC `result` serialised once and reused: answers that never change (a profile's
 * `tools/list`) are built at start-up instead of being stringified on every request.
 */
export class PreSerialized {
  constructor(readonly json: string) {}

  static of(value: unknown): PreSerialized {
    return new PreSerialized(JSON.stringify(value));
  }
}

/**
 * JSON text of an envelope or a batch. An envelope whose `result` is {@link PreSerialized}
 * has it spliced in as is; everything else goes through `JSON.stringify`.
 */
export function serialize(payload: unknown): string {
  if (Array.isArray(payload)) return `[${payload.map(serialize).join(',')}]`;
  const result = (payload as { result?: unknown } | null)?.result;
  if (result instanceof PreSerialized) {
    const { jsonrpc, id } = payload as { jsonrpc: string; id: unknown };
    return `{"jsonrpc":${JSON.stringify(jsonrpc)},"id":${JSON.stringify(id)},"result":${result.json}}`;
  }
  return JSON.stringify(payload);
}

/** A JSON-RPC envelope (or batch) as a plain JSON body. */
export function frameJson(status: number, envelope: unknown): FramedResponse {
  return {
    status,
    headers: { 'Content-Type': JSON_CONTENT_TYPE },
    body: serialize(envelope),
  };
}

/**
 * A JSON-RPC envelope (or batch) as exactly one SSE event, after which the stream ends:
 * `event: message\ndata: <envelope on one line>\n\n`. JSON text never holds a raw CR or
 * LF (they are escaped inside strings), so the data always fits on one line.
 */
export function frameSse(status: number, envelope: unknown): FramedResponse {
  return {
    status,
    headers: SSE_HEADERS,
    body: `event: message\ndata: ${serialize(envelope)}\n\n`,
  };
}
