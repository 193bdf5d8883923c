import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app.factory';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { installGracefulShutdown } from './shutdown';

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
  const app = await createApp(config);
  installGracefulShutdown(app, config.shutdownTimeoutMs, config.shutdownDrainMs);
  await app.listen(config.port, config.host);
  new Logger('Main').log(
    `listening on http://${config.host}:${config.port} (auth ${config.authEnabled ? 'on' : 'off'})`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `agent-data: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
