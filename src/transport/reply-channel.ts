import type { ServerResponse } from 'node:http';
import type { Negotiated } from './accept-negotiation';
import { SSE_HEADERS, serialize } from './framing';

/** Why a request's signal aborted: the client closed the connection before the answer. */
export class ClientClosed extends Error {
  constructor() {
    super('the client closed the connection before the answer was complete');
    this.name = 'ClientClosed';
  }
}

/**
 * The response side of one MCP POST while its answer is being worked out (docs/mcp.md).
 *
 * When the answer is SSE-framed, notifications (progress) may go out before it, and work
 * that takes longer than the keep-alive interval gets `: keepalive` comments so that
 * proxies and clients do not drop a quiet connection. Both start with {@link start}, when
 * the request has been read and checked and its work begins: every refusal before that
 * keeps its own status. The stream opens (200 and the SSE headers) only when the first of
 * these is written: an answer that needs neither is framed whole, exactly as before. JSON
 * answers never stream.
 *
 * {@link signal} aborts, with {@link ClientClosed}, when the client closes the connection
 * before the answer is complete (the 2026-07-28 revision's cancellation).
 */
export class ReplyChannel {
  private isOpen = false;
  private done = false;
  private keepAlive: NodeJS.Timeout | undefined;
  private abort: AbortController | undefined;

  private started = false;

  constructor(
    private readonly response: ServerResponse,
    readonly framing: Negotiated,
    private readonly keepAliveMs: number,
  ) {}

  /** Whether notifications can reach the client before the answer: it is SSE-framed. */
  get streams(): boolean {
    return this.framing === 'sse';
  }

  /** Whether the answer has begun as a stream (its status and headers are written). */
  get opened(): boolean {
    return this.isOpen;
  }

  /** The work begins: notifications may flow, and the keep-alive runs until {@link finish}. */
  start(): void {
    if (this.started || !this.streams) return;
    this.started = true;
    this.scheduleKeepAlive();
  }

  /** Writes a JSON-RPC notification as an SSE event now; a no-op unless started and SSE. */
  notify(notification: unknown): void {
    if (!this.started || this.done || this.response.destroyed) return;
    this.open();
    this.response.write(`event: message\ndata: ${serialize(notification)}\n\n`);
  }

  /** Aborts when the client goes away before the answer is complete. */
  get signal(): AbortSignal {
    if (this.abort === undefined) {
      const abort = new AbortController();
      this.abort = abort;
      if (this.response.destroyed || this.response.socket?.destroyed === true) {
        abort.abort(new ClientClosed());
      } else {
        this.response.once('close', () => {
          if (!this.done) abort.abort(new ClientClosed());
        });
      }
    }
    return this.abort.signal;
  }

  /**
   * Ends the channel with the answer as one SSE event body (`event: message\n...`). Returns
   * `false`, writing nothing, when the stream never opened: the caller frames the answer
   * whole, with its own status and headers.
   */
  finish(sseEvent?: string | Buffer): boolean {
    this.done = true;
    clearTimeout(this.keepAlive);
    if (!this.isOpen) return false;
    this.response.end(sseEvent);
    return true;
  }

  private open(): void {
    if (this.isOpen) return;
    this.isOpen = true;
    this.response.writeHead(200, SSE_HEADERS);
  }

  private scheduleKeepAlive(): void {
    this.keepAlive = setTimeout(() => {
      if (this.done || this.response.destroyed || this.response.writableEnded) return;
      this.open();
      this.response.write(': keepalive\n\n');
      this.scheduleKeepAlive();
    }, this.keepAliveMs);
    this.keepAlive.unref();
  }
}
