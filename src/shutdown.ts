import { INestApplication, Logger } from '@nestjs/common';
import type { Server } from 'node:http';

/**
 * SIGTERM / SIGINT: stop accepting connections, let in-flight requests finish (at most
 * `timeoutMs`, then remaining connections are cut), then close the application: module
 * hooks stop background work, the pool closes, the embedded PostgreSQL stops. Exit 0.
 */
export function installGracefulShutdown(app: INestApplication, timeoutMs: number): void {
  const logger = new Logger('Shutdown');
  let closing = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal} received: draining requests`);
    const server = app.getHttpServer() as Server;
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
