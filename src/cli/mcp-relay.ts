import { Agent, request, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';

/** Requests to the server at once: the stdio session's bound (src/transport/in-flight-limit.ts). */
const MAX_SOCKETS = 16;

/** Why a message could not be relayed: the server is not there, or answered no JSON-RPC. */
export class RelayError extends Error {
  constructor(
    message: string,
    /** The server did not answer at all (refused, reset, gone): look for it again. */
    readonly unreachable: boolean,
  ) {
    super(message);
    this.name = 'RelayError';
  }
}

/**
 * Receives each message of an answer: parsed, as one line of text, and the HTTP status. A
 * promise returned means "not now": no more of the answer is read until it settles, so a
 * stream (a listen's notifications) waits in the server, which bounds it, rather than here.
 */
export type Deliver = (message: unknown, text: string, status: number) => void | Promise<void>;

/** What came back for one POST once its last message was delivered. */
export interface RelayAnswer {
  readonly status: number;
}

/**
 * POSTs JSON-RPC messages to a server's MCP endpoint over kept-alive loopback connections
 * and hands every message of the answer to `deliver` as soon as it arrives: the one JSON
 * body, or each event of an SSE answer (progress notifications before the result). Only
 * text that parses as JSON is delivered, one message per line.
 */
export class McpRelay {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });

  /**
   * Sends `body` to `url`. Resolves once the answer has ended; rejects with
   * {@link RelayError}, or with the abort reason when `signal` aborted (the request's
   * connection is then closed, which cancels a 2026-era request on the server).
   */
  async post(
    url: URL,
    body: string,
    headers: OutgoingHttpHeaders,
    signal: AbortSignal,
    deliver: Deliver,
  ): Promise<RelayAnswer> {
    try {
      return await this.once(url, body, headers, signal, deliver);
    } catch (error) {
      // A kept-alive connection the server closed as the request went out: nothing was
      // read there, and a new connection is the answer (Node's documented retry).
      if ((error as { retry?: boolean }).retry === true && !signal.aborted) {
        return this.once(url, body, headers, signal, deliver);
      }
      throw error;
    }
  }

  /** Closes the kept-alive connections (the session ends). */
  close(): void {
    this.agent.destroy();
  }

  private once(
    url: URL,
    body: string,
    headers: OutgoingHttpHeaders,
    signal: AbortSignal,
    deliver: Deliver,
  ): Promise<RelayAnswer> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error);
      const payload = Buffer.from(body);
      const outgoing = request(url, {
        method: 'POST',
        agent: this.agent,
        headers: { ...headers, 'content-length': payload.length },
      });
      const onAbort = () => outgoing.destroy(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = () => signal.removeEventListener('abort', onAbort);
      outgoing.once('error', (error: NodeJS.ErrnoException) => {
        settle();
        if (signal.aborted) return reject(signal.reason as Error);
        const failure = new RelayError(
          `the Agent Data server at ${url.origin} did not answer (${error.code ?? error.message})`,
          true,
        );
        if (outgoing.reusedSocket && error.code === 'ECONNRESET') {
          Object.assign(failure, { retry: true });
        }
        reject(failure);
      });
      outgoing.once('response', (response) => {
        read(response, url, deliver).then(
          (answer) => {
            settle();
            resolve(answer);
          },
          (error: unknown) => {
            settle();
            reject(signal.aborted ? (signal.reason as Error) : error);
          },
        );
      });
      outgoing.end(payload);
    });
  }
}

/** Reads one answer: JSON, SSE, or an empty 202. */
async function read(response: IncomingMessage, url: URL, deliver: Deliver): Promise<RelayAnswer> {
  const status = response.statusCode ?? 0;
  const type = (response.headers['content-type'] ?? '').toLowerCase();
  let wait: Promise<void> | undefined;
  const emit = (text: string) => {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      throw new RelayError(
        `the Agent Data server at ${url.origin} answered a message that is not JSON`,
        false,
      );
    }
    // One line per message: the server writes compact JSON, but a line must never break.
    const held = deliver(message, text.includes('\n') ? JSON.stringify(message) : text, status);
    if (held !== undefined) wait = held;
  };
  try {
    if (type.startsWith('text/event-stream')) {
      const events = new SseEvents(emit);
      for await (const chunk of response) {
        events.push(chunk as Buffer);
        // The socket is not read meanwhile: TCP holds the server's writes back.
        if (wait !== undefined) await wait;
        wait = undefined;
      }
      events.end();
    } else {
      const chunks: Buffer[] = [];
      for await (const chunk of response) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      if (type.startsWith('application/json') && text.trim() !== '') emit(text);
      else if (status !== 202) {
        throw new RelayError(
          `the Agent Data server at ${url.origin} answered HTTP ${status} without JSON-RPC`,
          false,
        );
      }
    }
  } catch (error) {
    if (error instanceof RelayError) throw error;
    // The connection broke mid-answer: the server went away.
    throw new RelayError(
      `the Agent Data server at ${url.origin} stopped answering (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      true,
    );
  }
  return { status };
}

/**
 * The `data` of each event of a `text/event-stream` (comments such as `: keepalive` and
 * other fields ignored), as the events complete.
 */
class SseEvents {
  private pending = '';
  private data: string[] = [];
  private readonly decoder = new TextDecoder();

  constructor(private readonly onData: (data: string) => void) {}

  push(chunk: Buffer): void {
    this.pending += this.decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = this.pending.indexOf('\n')) !== -1) {
      const line = this.pending.slice(0, newline).replace(/\r$/, '');
      this.pending = this.pending.slice(newline + 1);
      this.line(line);
    }
  }

  end(): void {
    if (this.pending !== '') this.line(this.pending);
    this.line('');
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.onData(this.data.join('\n'));
      this.data = [];
    } else if (line.startsWith('data:')) {
      this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
  }
}
