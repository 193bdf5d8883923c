import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PageServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Paths requested so far, in order. */
  readonly hits: string[];
  close(): Promise<void>;
}

/**
 * A local web server for ingest_document tests: `routes` maps a path to a handler; unknown
 * paths answer 404. Sockets are tracked so that close() never waits on a hung request.
 */
export async function startPageServer(
  routes: Record<string, (request: http.IncomingMessage, response: http.ServerResponse) => void>,
  host = '127.0.0.1',
): Promise<PageServer> {
  const hits: string[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    hits.push(request.url ?? '/');
    const route = routes[path];
    if (route) route(request, response);
    else response.writeHead(404).end('not found');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A handler answering `body` with `contentType`. */
export function page(contentType: string, body: string | Buffer, status = 200) {
  return (_request: http.IncomingMessage, response: http.ServerResponse) => {
    response.writeHead(status, { 'Content-Type': contentType }).end(body);
  };
}
