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

/** A JSON-RPC envelope (or batch) as a plain JSON body. */
export function frameJson(status: number, envelope: unknown): FramedResponse {
  return {
    status,
    headers: { 'Content-Type': JSON_CONTENT_TYPE },
    body: JSON.stringify(envelope),
  };
}

/**
 * A JSON-RPC envelope (or batch) as exactly one SSE event, after which the stream ends:
 * `event: message\ndata: <envelope on one line>\n\n`. `JSON.stringify` never emits a raw
 * CR or LF (they are escaped inside strings), so the data always fits on one line.
 */
export function frameSse(status: number, envelope: unknown): FramedResponse {
  return {
    status,
    headers: SSE_HEADERS,
    body: `event: message\ndata: ${JSON.stringify(envelope)}\n\n`,
  };
}
