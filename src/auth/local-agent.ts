// An agent on this machine relaying MCP through the server (`agent-data mcp` with a server
// on its DATA_DIR, docs/cli.md) without an API key acts as the local user, as it would
// running in-process: it proves it can read DATA_DIR/server.json by showing the token there.
// Light on purpose: the relaying command imports it, and must not load Nest.

/** The request header carrying DATA_DIR/server.json's `local_token`. */
export const LOCAL_AGENT_HEADER = 'x-agent-data-local';

/**
 * Why an agent without a key may not start: under an access policy the local user is
 * nobody; the policy names keys. Said by `agent-data mcp` in-process, and by the server to
 * an agent relaying through it.
 */
export const KEY_REQUIRED_BY_POLICY =
  'an access policy is configured: give the API key whose folders this agent may use (AGENT_DATA_API_KEY or --api-key-file)';

/**
 * Whether a connection comes from this machine: from a loopback address (IPv4, IPv6 or
 * IPv4-mapped), or to the very address it comes from (a server bound to one interface is
 * reached on that address).
 */
export function isLocalPeer(remote: string | undefined, local: string | undefined): boolean {
  if (remote === undefined) return false;
  const v4 = remote.startsWith('::ffff:') ? remote.slice(7) : remote;
  return remote === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4) || remote === local;
}
