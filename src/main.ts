import 'reflect-metadata';
import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { tellPrimary, WORKER_LISTENING } from './cluster/messages';
import { AppConfig, hangUpReloads } from './config/app-config';
import { startupFailure } from './config/config-values';
import { loadConfig } from './config/load-config';
import { announceServer, newLocalToken } from './local-server/server-announcement';
import { announcementOf } from './local-server/announcement-of';

async function main(): Promise<void> {
  const loaded = loadConfig();
  // A worker has its primary's token; a single server makes its own.
  const config = new AppConfig({
    ...loaded,
    localAgentToken: loaded.localAgentToken ?? newLocalToken(),
  });
  if (config.webConcurrency > 1 && cluster.isPrimary) {
    // The primary serves no request: it does not load the application at all.
    const { runPrimary } = await import('./primary/primary');
    await runPrimary(config);
    return;
  }
  const [{ Logger }, { createApp }, { installGracefulShutdown }] = await Promise.all([
    import('@nestjs/common'),
    import('./app.factory'),
    import('./shutdown'),
  ]);
  const app = await createApp(config);
  installGracefulShutdown(
    app,
    config.shutdownTimeoutMs,
    config.shutdownDrainMs,
    hangUpReloads(config),
  );
  await app.listen(config.port, config.host);
  tellPrimary(WORKER_LISTENING);
  const logger = new Logger('Main');
  logger.log(
    `listening on http://${config.host}:${config.port} (auth ${config.authEnabled ? 'on' : 'off'}${cluster.isWorker ? `, ${config.clusterRole} worker` : ''})`,
  );
  // In cluster mode the primary announces the cluster once.
  if (cluster.isWorker) return;
  const { port } = app.getHttpServer().address() as AddressInfo;
  await announceServer(config.dataDir, announcementOf(config, port), {
    info: (message) => logger.log(message),
    warn: (message) => logger.warn(message),
  });
}

main().catch((error: unknown) => {
  // A setting checked only as the application starts (the access policy) is a configuration
  // error too.
  process.stderr.write(startupFailure(error));
  process.exit(1);
});
