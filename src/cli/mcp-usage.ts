import { MCP_ROUTES, type McpProfile } from '../auth/mcp-routes';

export const MCP_USAGE = `agent-data mcp [--profile NAME] [--api-key-file FILE] [--standalone]

Serves MCP over stdio for a local agent that starts its servers as a command (Claude Desktop,
Cursor, Claude Code...): JSON-RPC messages on stdin and stdout, one per line, in both protocol
eras (2025-11-25 with initialize, 2026-07-28 without); logs go to stderr. The same tools,
resources, prompts and completions as the HTTP endpoint of the profile.

It reads the server's configuration from the environment. Give DATA_DIR as an absolute path:
clients start commands from a directory of their own, and a new DATA_DIR is a new, empty
knowledge base.

Through a server: when an Agent Data server runs on the same DATA_DIR (it announces itself in
DATA_DIR/server.json) and serves the database this command would open, the command relays
each message to that server's endpoint of the profile and builds nothing of its own: no
database connection, no search index, no embedding model. Ten agents then cost one server
and ten small relays. If the server stops, requests get an error (-32603) until it runs again.

In-process: without such a server (or with --standalone), the command runs the application
itself. With DATABASE_URL it uses that database; otherwise the embedded PostgreSQL under
DATA_DIR, shared with a server or other agent-data mcp processes on the same DATA_DIR: the
first one starts it, the last one stops it.

  --profile NAME       internal (default), readonly, gpt or gpt-full
  --api-key-file FILE  act as this API key (default: AGENT_DATA_API_KEY): its profiles and its
                       folders under the access policy. Without a key the process acts as the
                       local user, with every folder; with an access policy a key is required.
  --standalone         run in-process even when a server runs on DATA_DIR
  --help, -h           this text

Exit codes: 0 when stdin closes or on SIGINT/SIGTERM, 1 when it cannot start, 2 a usage error.`;

/** A wrong option of `agent-data mcp` (exit code 2). */
export class McpUsageError extends Error {}

/** The profile `--profile` names (`internal` when absent); a usage error for any other. */
export function mcpProfileOf(option: string | undefined): McpProfile {
  const profile = option ?? 'internal';
  if (!Object.hasOwn(MCP_ROUTES, profile)) {
    throw new McpUsageError(
      `--profile must be one of ${Object.keys(MCP_ROUTES).join(', ')} (not ${JSON.stringify(option)})`,
    );
  }
  return profile as McpProfile;
}
