import 'reflect-metadata';
import cluster from 'node:cluster';
import { tellPrimary, WORKER_LISTENING } from './cluster-messages';
import { AppConfig } from './config/app-config';
import { startupFailure } from './config/config-values';
import { loadConfig } from './config/load-config';

async function main(): Promise<void> {
  const config: AppConfig = loadConfig();
  if (config.webConcurrency > 1 && cluster.isPrimary) {
    // The primary serves no request: it does not load the application at all.
    const { runPrimary } = await import('./cluster');
    await runPrimary(config);
    return;
  }
  const [{ Logger }, { createApp }, { installGracefulShutdown }] = await Promise.all([
    import('@nestjs/common'),
    import('./app.factory'),
    import('./shutdown'),
  ]);
  const app = await createApp(config);
  installGracefulShutdown(app, config.shutdownTimeoutMs, config.shutdownDrainMs);
  await app.listen(config.port, config.host);
  tellPrimary(WORKER_LISTENING);
  new Logger('Main').log(
    `listening on http://${config.host}:${config.port} (auth ${config.authEnabled ? 'on' : 'off'}${cluster.isWorker ? `, ${config.clusterRole} worker` : ''})`,
  );
}

main().catch((error: unknown) => {
  // A setting checked only as the application starts (the access policy) is a configuration
  // error too.
  process.stderr.write(startupFailure(error));
  process.exit(1);
});
