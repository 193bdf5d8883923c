import { INestApplication, Logger } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { letGoOfTerminals, standardTerminals } from './common/terminals';
import { HealthService } from './health/health.service';
import { ChangeSubscriptions } from './mcp/subscriptions/change-subscriptions';

/**
 * SIGTERM / SIGINT, and SIGHUP (a closed terminal) unless `hangUpReloads` (a file is read
 * again on it), in three steps:
 *
 * 1. Drain (`SHUTDOWN_DRAIN_MS`, 1 s): readiness answers 503 (load balancers stop sending),
 *    and every request still arriving, on a new or a kept-alive connection, is answered
 *    with `Connection: close`. MCP change listeners end at once, with the empty result that
 *    tells a client to listen again (elsewhere): their streams would otherwise hold the
 *    close below until its timeout. Keep-alive clients learn from their next answer that the
 *    connection ends, instead of having it reset under a request already on the wire.
 * 2. Close: stop listening, close the connections left idle, let requests in flight finish
 *    (at most `timeoutMs`, then their connections are cut).
 * 3. Stop the application: module hooks stop background work, then a lexical index that
 *    changed 1 000 times or more since its snapshot writes it (at most 10 s), the pool
 *    closes, the embedded PostgreSQL stops. Exit 0.
 */
export function installGracefulShutdown(
  app: INestApplication,
  timeoutMs: number,
  drainMs: number,
  hangUpReloads: boolean,
): void {
  const logger = new Logger('Shutdown');
  // Known now: once the terminal is gone, a stream of it no longer says it is one.
  const terminals = standardTerminals();
  const server = app.getHttpServer() as Server;
  let closing = false;
  const inFlight = new Set<ServerResponse>();
  server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    if (closing) response.setHeader('Connection', 'close');
    inFlight.add(response);
    response.once('close', () => inFlight.delete(response));
  });
  let stoppingSince = 0;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (closing) {
      // Heard again and let be: `npm start` passes a terminal's Ctrl-C on, so the server hears
      // it twice at once, and ending on the second left the embedded PostgreSQL running.
      if (Date.now() - stoppingSince > 1000) logger.log(`${signal} received again: stopping`);
      return;
    }
    closing = true;
    stoppingSince = Date.now();
    logger.log(`${signal} received: draining requests`);
    app.get(HealthService).shuttingDown();
    app.get(ChangeSubscriptions, { strict: false }).endAll();
    for (const response of inFlight) {
      if (!response.headersSent) response.setHeader('Connection', 'close');
    }
    await new Promise((resolve) => setTimeout(resolve, drainMs));
    const force = setTimeout(() => {
      logger.warn(`requests still running after ${timeoutMs} ms: closing their connections`);
      server.closeAllConnections();
    }, timeoutMs);
    try {
      // Also closes the idle keep-alive connections (Node 19+); busy ones end with their answer.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      clearTimeout(force);
      await app.close();
      logger.log('stopped');
      if (signal === 'SIGHUP') letGoOfTerminals(terminals);
      process.exit(0);
    } catch (error) {
      logger.error(`shutdown failed: ${(error as Error).message}`);
      process.exit(1);
    }
  };
  // Every time, not once: without a listener a second signal would end the process mid-stop.
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  // A terminal that closes sends SIGHUP to what runs in it (`npm start`): Node's default is to
  // end at once, leaving the embedded PostgreSQL running behind it. Where SIGHUP means "read
  // the access policy or sources file again" it keeps that meaning (docs/operations.md).
  if (!hangUpReloads) process.on('SIGHUP', shutdown);
}
