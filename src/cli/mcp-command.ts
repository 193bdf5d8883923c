import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { ApiKeyService, LOCAL_PRINCIPAL, type Principal } from '../auth/api-key.service';
import { KEY_REQUIRED_BY_POLICY } from '../auth/local-agent';
import type { McpProfile } from '../auth/mcp-routes';
import { createRootLogger, PinoNestLogger } from '../common/logging';
import { AppConfig, hangUpReloads } from '../config/app-config';
import { isStartupRefusal, startupFailure } from '../config/config-values';
import { AccessPolicyService } from '../documents/access-policy.service';
import { McpStdioSession } from '../mcp/mcp-stdio';
import { McpDispatcher } from '../mcp/mcp.dispatcher';
import { ChangeSubscriptions } from '../mcp/subscriptions/change-subscriptions';
import { pauseStdin, serveStdio, takeStdout } from './stdio-serve';

/**
 * `agent-data mcp` in-process (no server runs on DATA_DIR, or --standalone): the
 * application without its HTTP server, and one stdio session. Ends with exit code 0 when
 * stdin closes (every request received answered first) or on SIGINT/SIGTERM; 1 when it
 * cannot start, naming why.
 */
export async function runMcp(
  loaded: AppConfig,
  options: {
    profile: McpProfile;
    /** The API key to act as (AGENT_DATA_API_KEY or --api-key-file), if any. */
    apiKey: string | undefined;
  },
): Promise<number> {
  const { profile, apiKey: key } = options;
  const stdout = takeStdout();

  // Its client ends it by force a few seconds after closing stdin (the SDK's transport after
  // four): the batches in progress get a second, the lexical index's snapshot a second and a
  // half, and the embedded PostgreSQL is only asked to stop, so that leaving it comes before.
  const config = new AppConfig({
    ...loaded,
    embeddedStopWaits: false,
    pipelineStopGraceMs: 1000,
    stopSnapshotWithinMs: 1500,
  });
  let app: INestApplicationContext;
  try {
    app = await openApplication(config);
  } catch (error) {
    process.stderr.write(startupFailure(error));
    return 1;
  }
  const close = once(async () => {
    await app.close();
  });
  try {
    const principal = admit(app, config, key, profile);
    const policy = app.get(AccessPolicyService);
    const session = new McpStdioSession({
      dispatcher: app.get(McpDispatcher),
      profile,
      principal,
      access: policy.accessOf(principal, 'mcp'),
      write: (line) => stdout.write(line),
      onDrain: (resume) => stdout.onDrain(resume),
      backpressure: pauseStdin,
      subscriptions: app.get(ChangeSubscriptions, { strict: false }),
    });
    await serveStdio(session, config.maxRequestBytes, { hangUpStops: !hangUpReloads(config) });
    await close();
    return 0;
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

/** The application context (no HTTP server). */
async function openApplication(config: AppConfig): Promise<INestApplicationContext> {
  const [{ NestFactory }, { AppModule }] = await Promise.all([
    import('@nestjs/core'),
    import('../app.module'),
  ]);
  const root = createRootLogger(config, 2);
  // The logger from the first line, as the server's (app.factory.ts): a refusal to start is
  // the one line runMcp writes.
  return NestFactory.createApplicationContext(AppModule.register(config), {
    logger: new PinoNestLogger(root, isStartupRefusal),
    abortOnError: false,
  });
}

/** Who the session acts as: the key's principal, or the local user. */
function admit(
  app: INestApplicationContext,
  config: AppConfig,
  key: string | undefined,
  profile: McpProfile,
): Principal {
  const policy = app.get(AccessPolicyService);
  if (key === undefined || !config.authEnabled) {
    if (policy.active) {
      throw new Error(KEY_REQUIRED_BY_POLICY);
    }
    return LOCAL_PRINCIPAL;
  }
  const outcome = app.get(ApiKeyService).authenticate({ 'x-api-key': key });
  if (outcome.outcome !== 'ok') throw new Error('the API key is not one of API_KEYS');
  if (!ApiKeyService.allows(outcome.principal, profile)) {
    throw new Error(`the API key ${outcome.principal.name} may not use the ${profile} profile`);
  }
  return outcome.principal;
}

function once<T>(work: () => Promise<T>): () => Promise<T> {
  let done: Promise<T> | undefined;
  return () => (done ??= work());
}
