import { KEY_REQUIRED_BY_POLICY } from '../auth/local-agent';
import { MCP_ROUTES, type McpProfile } from '../auth/mcp-routes';
import { createRootLogger } from '../common/logging';
import type { AppConfig } from '../config/app-config';
import { liveAnnouncement } from '../local-server/server-announcement';
import { BridgeSession, ServerLink } from './mcp-bridge';
import { McpRelay, RelayError } from './mcp-relay';
import { relayHeaders } from './relay-headers';
import { pauseStdin, serveStdio, takeStdout } from './stdio-serve';

/**
 * `agent-data mcp` through the server running on the same DATA_DIR (docs/cli.md), when one
 * does and serves the database this command would open: the stdio session is relayed to
 * the profile's HTTP endpoint, and this process builds no application, opens no database
 * and loads no model. Resolves `undefined` when no such server answers (the caller then
 * runs the application in-process, as before), else with the exit code: 0 when stdin
 * closes (every request received answered first) or on SIGINT/SIGTERM. Throws the same
 * one-line refusals as the in-process mode when the server does not admit this agent.
 */
export async function runBridgedMcp(
  config: AppConfig,
  options: { profile: McpProfile; apiKey: string | undefined },
): Promise<number | undefined> {
  const announced = await liveAnnouncement(config.dataDir);
  if (announced === undefined) return undefined;
  const log = createRootLogger(config, 2).child({
    context: 'McpBridge',
  });
  if (!ServerLink.servesOurDatabase(announced, config)) {
    log.info(
      `the server at ${announced.url} serves another database than DATABASE_URL here: running in-process`,
    );
    return undefined;
  }
  const path = `/${MCP_ROUTES[options.profile][0]}`;
  const link = new ServerLink(config, path, options.apiKey, announced, log);
  const relay = new McpRelay();
  try {
    if (!(await admitted(relay, link, options))) {
      relay.close();
      return undefined;
    }
  } catch (error) {
    relay.close();
    throw error;
  }
  log.info(`relaying MCP to the Agent Data server at ${announced.url} (pid ${announced.pid})`);
  const stdout = takeStdout();
  const session = new BridgeSession({
    relay,
    link,
    write: (line) => stdout.write(line),
    onDrain: (resume) => stdout.onDrain(resume),
    backpressure: pauseStdin,
  });
  try {
    await serveStdio(session, config.maxRequestBytes, { hangUpStops: true });
  } finally {
    relay.close();
  }
  return 0;
}

/**
 * Asks the server whether it admits this agent on the profile's endpoint (a `ping` with
 * the session's credentials): `true` when it does, `false` when it went away meanwhile;
 * throws the refusal, worded as the in-process mode words it.
 */
async function admitted(
  relay: McpRelay,
  link: ServerLink,
  options: { profile: McpProfile; apiKey: string | undefined },
): Promise<boolean> {
  const ping = { jsonrpc: '2.0', id: 'agent-data-mcp-start', method: 'ping' };
  const target = await link.current();
  let refusal = '';
  let status: number;
  try {
    ({ status } = await relay.post(
      target.endpoint,
      JSON.stringify(ping),
      { ...relayHeaders(ping, undefined), ...target.credentials },
      AbortSignal.timeout(10_000),
      (message) => {
        refusal = (message as { error?: { message?: string } }).error?.message ?? '';
      },
    ));
  } catch (error) {
    if (error instanceof RelayError && error.unreachable) return false;
    throw error;
  }
  switch (status) {
    case 200:
      return true;
    case 401:
      if (options.apiKey !== undefined) throw new Error('the API key is not one of API_KEYS');
      throw new Error(
        refusal.includes(KEY_REQUIRED_BY_POLICY)
          ? KEY_REQUIRED_BY_POLICY
          : `the Agent Data server at ${link.url} requires an API key (AGENT_DATA_API_KEY or --api-key-file)`,
      );
    case 403: {
      const name = /key "([^"]+)"/.exec(refusal)?.[1];
      throw new Error(
        name === undefined
          ? `the Agent Data server at ${link.url} refuses the ${options.profile} profile: ${refusal}`
          : `the API key ${name} may not use the ${options.profile} profile`,
      );
    }
    default:
      throw new Error(
        `the Agent Data server at ${link.url} answered HTTP ${status} to a ping on ${target.endpoint.pathname}${refusal === '' ? '' : `: ${refusal}`}`,
      );
  }
}
