import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/app.factory';
import { AppConfig } from '../../src/config/app-config';
import { loadConfig } from '../../src/config/load-config';
import { createTestDatabase, TestDatabase } from './database';

export interface TestApp {
  readonly app: NestExpressApplication;
  readonly config: AppConfig;
  readonly db: TestDatabase;
  /** `http://127.0.0.1:<port>` of the listening server. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

/**
 * Boots the real AppModule on a fresh cloned database and listens on a free loopback port.
 * `env` overrides configuration exactly as environment variables would.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  db?: TestDatabase,
  /** Runs on the application before it starts (e.g. to add a global guard). */
  beforeListen?: (app: NestExpressApplication) => void,
): Promise<TestApp> {
  const database = db ?? (await createTestDatabase());
  const config = loadConfig({
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: database.url,
    MIGRATIONS_RUN: 'false',
    // The embedding pipeline runs only in tests that turn it on (VECTOR_SYNC_ENABLED: 'true'):
    // elsewhere documents stay `pending` and the lag and pending gauges hold still.
    VECTOR_SYNC_ENABLED: 'false',
    // No embedding model unless a test installs one: a model under the developer's own
    // ./.data/models must not change what the tests see.
    MODELS_DIR: join(tmpdir(), 'agent-data-tests-no-models'),
    ...env,
  });
  const app = await createApp(config);
  beforeListen?.(app);
  // PORT only when the test chose one (e.g. for OAUTH_RESOURCE); else any free port.
  await app.listen(env.PORT === undefined ? 0 : config.port, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    app,
    config,
    db: database,
    baseUrl: `http://127.0.0.1:${port}`,
    async close() {
      await app.close();
      if (!db) await database.drop();
    },
  };
}
