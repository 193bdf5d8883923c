import 'reflect-metadata';
import cluster from 'node:cluster';
import { tellPrimary, WORKER_LISTENING } from './cluster-messages';
import { AppConfig } from './config/app-config';
import { ConfigError } from './config/config-values';
import { loadConfig } from './config/load-config';

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`agent-data: invalid configuration: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
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
  // A setting checked only as the application starts (the access policy) is still a
  // configuration error.
  process.stderr.write(
    error instanceof ConfigError
      ? `agent-data: invalid configuration: ${error.message}\n`
      : `agent-data: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
