import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request a site received. */
export interface Hit {
  /** The path without its query. */
  readonly path: string;
  /** Path and query, as sent. */
  readonly url: string;
  /** When the request arrived (`performance.now()`). */
  readonly at: number;
  readonly headers: http.IncomingHttpHeaders;
}

export type Route = (request: http.IncomingMessage, response: http.ServerResponse) => void;

export interface LoopbackSite {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly hits: Hit[];
  /** Hits of one path (query ignored). */
  hitsOf(path: string): Hit[];
  /** The most requests that were being answered at the same time. */
  readonly maxInFlight: number;
  close(): Promise<void>;
}

/**
 * A web site on 127.0.0.1 for crawler tests: `routes` maps a path (query ignored) to its
 * handler, `fallback` answers the others (404 by default). Every request is recorded with
 * its arrival time and headers; sockets are tracked so that close() never waits on one.
 */
export async function startLoopbackSite(
  routes: Record<string, Route>,
  fallback: Route = (_request, response) => response.writeHead(404).end('not found'),
): Promise<LoopbackSite> {
  const hits: Hit[] = [];
  const sockets = new Set<Socket>();
  let inFlight = 0;
  let maxInFlight = 0;
  const server = http.createServer((request, response) => {
    const url = request.url ?? '/';
    const path = url.split('?')[0];
    hits.push({ path, url, at: performance.now(), headers: request.headers });
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    response.once('close', () => inFlight--);
    (routes[path] ?? fallback)(request, response);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    hitsOf: (path) => hits.filter((hit) => hit.path === path),
    get maxInFlight() {
      return maxInFlight;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A handler answering `body` with `contentType` and any other headers. */
export function answer(
  contentType: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
  status = 200,
): Route {
  return (_request, response) => {
    response.writeHead(status, { 'Content-Type': contentType, ...headers }).end(body);
  };
}

/** An HTML page with a title and a body. */
export function html(title: string, body: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
}
