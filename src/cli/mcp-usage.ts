export const MCP_USAGE = `agent-data mcp [--profile NAME] [--api-key-file FILE]

Serves MCP over stdio for a local agent that starts its servers as a command (Claude Desktop,
Cursor, Claude Code...): JSON-RPC messages on stdin and stdout, one per line, in both protocol
eras (2025-11-25 with initialize, 2026-07-28 without); logs go to stderr. The same tools,
resources, prompts and completions as the HTTP endpoint of the profile.

It reads the server's configuration from the environment. With DATABASE_URL it uses that
database; otherwise the embedded PostgreSQL under DATA_DIR (default ./.data), shared with a
server or other agent-data mcp processes on the same DATA_DIR: the first one starts it, the
last one stops it. Give DATA_DIR as an absolute path: clients start commands from a directory
of their own, and a new DATA_DIR is a new, empty knowledge base.

  --profile NAME       internal (default), readonly, gpt or gpt-full
  --api-key-file FILE  act as this API key (default: AGENT_DATA_API_KEY): its profiles and its
                       folders under the access policy. Without a key the process acts as the
                       local user, with every folder; with an access policy a key is required.
  --help, -h           this text

Exit codes: 0 when stdin closes or on SIGINT/SIGTERM, 1 when it cannot start, 2 a usage error.`;

/** A wrong option of `agent-data mcp` (exit code 2). */
export class McpUsageError extends Error {}
