import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: IncomingMessage['headers'];
  readonly body: unknown;
}

export type Reply = { status?: number; result: unknown };

/**
 * A recording HTTP server on 127.0.0.1 with Qdrant's REST envelope
 * (`{result, status: "ok", time}`). Each request is recorded; the answer comes from a
 * handler the test sets per route (`METHOD /path`), else a plain success.
 */
export class FakeQdrant {
  readonly requests: RecordedRequest[] = [];
  private readonly routes = new Map<string, (request: RecordedRequest) => Reply>();
  private server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }

  /** Answers `method path` (exact path, no query) with `reply`. */
  on(method: string, path: string, reply: Reply | ((request: RecordedRequest) => Reply)): void {
    this.routes.set(`${method} ${path}`, typeof reply === 'function' ? reply : () => reply);
  }

  /** Recorded requests as `METHOD /path?query`, in order. */
  lines(): string[] {
    return this.requests.map((r) => {
      const query = new URLSearchParams(r.query).toString();
      return `${r.method} ${r.path}${query ? `?${query}` : ''}`;
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
    };
    this.requests.push(request);
    const route = this.routes.get(`${request.method} ${request.path}`);
    const reply = route ? route(request) : { result: true };
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        (reply.status ?? 200) < 400
          ? { result: reply.result, status: 'ok', time: 0.0001 }
          : { status: { error: String(reply.result) }, time: 0.0001 },
      ),
    );
  }
}
