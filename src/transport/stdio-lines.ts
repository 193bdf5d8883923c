import {
  INVALID_REQUEST,
  jsonRpcError,
  type JsonRpcErrorEnvelope,
  PARSE_ERROR,
} from './json-rpc-envelope';

/**
 * Splits a byte stream into newline-delimited messages (the MCP stdio framing), each at
 * most `maxBytes` long. A line over the limit is never held whole: its bytes are dropped as
 * they come, and `onOversized` is told once it ends. A trailing `\r` is removed.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private held = 0;
  private oversized = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversized: (bytes: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      this.take(chunk.subarray(start, newline));
      this.finish();
      start = newline + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  }

  /** The stream ended: a last line without its newline still counts. */
  end(): void {
    if (this.held > 0 || this.oversized) this.finish();
  }

  private take(bytes: Buffer): void {
    this.held += bytes.length;
    if (this.held > this.maxBytes) {
      this.oversized = true;
      this.parts = [];
    } else if (bytes.length > 0) {
      this.parts.push(Buffer.from(bytes));
    }
  }

  private finish(): void {
    if (this.oversized) {
      this.onOversized(this.held);
    } else {
      let line = Buffer.concat(this.parts).toString('utf8');
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line.trim() !== '') this.onLine(line);
    }
    this.parts = [];
    this.held = 0;
    this.oversized = false;
  }
}

/** The answer to a line that is not JSON (-32700, no id: none could be read). */
export function unparsableLine(error: unknown): JsonRpcErrorEnvelope {
  return jsonRpcError(
    null,
    PARSE_ERROR,
    `Parse error: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/** The answer to a line over the size limit, dropped unread (-32600, no id). */
export function oversizedLine(bytes: number, limit: number): JsonRpcErrorEnvelope {
  return jsonRpcError(
    null,
    INVALID_REQUEST,
    `Invalid Request: a message of ${bytes} bytes is over the limit of ${limit} bytes (MAX_REQUEST_BYTES)`,
  );
}
