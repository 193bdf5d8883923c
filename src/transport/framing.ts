export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

export const JSON_HEADERS: Readonly<Record<string, string>> = { 'Content-Type': JSON_CONTENT_TYPE };

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
  private encoded: Buffer | undefined;

  constructor(readonly json: string) {}

  static of(value: unknown): PreSerialized {
    return new PreSerialized(JSON.stringify(value));
  }

  /** {@link json} as UTF-8, encoded on first use and kept. */
  get bytes(): Buffer {
    return (this.encoded ??= Buffer.from(this.json));
  }
}

const CLOSE_ENVELOPE = Buffer.from('}');
const SSE_EVENT_START = Buffer.from('event: message\ndata: ');
const SSE_EVENT_END = Buffer.from('\n\n');

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

/**
 * {@link serialize} as UTF-8 bytes. A {@link PreSerialized} result is copied from the bytes
 * it keeps instead of being spliced into a string that is encoded again: a profile's
 * `tools/list` is some 20 KB, and the HTTP layer would measure and encode it per request.
 */
export function serializeBytes(payload: unknown): Buffer {
  const result = Array.isArray(payload)
    ? undefined
    : (payload as { result?: unknown } | null)?.result;
  if (!(result instanceof PreSerialized)) return Buffer.from(serialize(payload));
  const { jsonrpc, id } = payload as { jsonrpc: string; id: unknown };
  const head = Buffer.from(
    `{"jsonrpc":${JSON.stringify(jsonrpc)},"id":${JSON.stringify(id)},"result":`,
  );
  return Buffer.concat([head, result.bytes, CLOSE_ENVELOPE]);
}

/**
 * Bytes of a JSON-RPC envelope (or batch) as exactly one SSE event, after which the stream
 * ends: `event: message\ndata: <envelope on one line>\n\n`. JSON text never holds a raw CR
 * or LF (they are escaped inside strings), so the data always fits on one line.
 */
export function sseEventBytes(payload: unknown): Buffer {
  return Buffer.concat([SSE_EVENT_START, serializeBytes(payload), SSE_EVENT_END]);
}
