import { INestApplication, Logger } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * SIGTERM / SIGINT: stop accepting connections, let in-flight requests finish (at most
 * `timeoutMs`, then remaining connections are cut), then close the application: module
 * hooks stop background work, the pool closes, the embedded PostgreSQL stops. Exit 0.
 */
export function installGracefulShutdown(app: INestApplication, timeoutMs: number): void {
  const logger = new Logger('Shutdown');
  const server = app.getHttpServer() as Server;
  let closing = false;
  // server.close() leaves keep-alive connections open: they would go on serving new requests
  // and hold the close until the timeout cuts them, mid-request. So once closing, every answer
  // says `Connection: close`, and a connection is ended as soon as its last answer is out.
  const inFlight = new Set<ServerResponse>();
  server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    if (closing) response.setHeader('Connection', 'close');
    inFlight.add(response);
    response.once('close', () => {
      inFlight.delete(response);
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
  });
  const shutdown = async (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal} received: draining requests`);
    for (const response of inFlight) {
      if (!response.headersSent) response.setHeader('Connection', 'close');
    }
    const force = setTimeout(() => {
      logger.warn(`requests still running after ${timeoutMs} ms: closing their connections`);
      server.closeAllConnections();
    }, timeoutMs);
    try {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      clearTimeout(force);
      await app.close();
      logger.log('stopped');
      process.exit(0);
    } catch (error) {
      logger.error(`shutdown failed: ${(error as Error).message}`);
      process.exit(1);
    }
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
