import { readFileSync } from 'node:fs';
import { RestClient } from './rest-client';
import { CommandUsageError } from './usage-error';

/** The options of every command that talks to a running server over its admin API. */
export const SERVER_OPTIONS = {
  server: { type: 'string' },
  'api-key-file': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

/**
 * The server of `--server` (else AGENT_DATA_URL, else the default address) with the key of
 * `--api-key-file` (else AGENT_DATA_API_KEY); a `--server` that is not a URL is a usage error,
 * answered with `usage`. Retries are told on stderr.
 */
export function serverClient(
  values: { server?: string; 'api-key-file'?: string },
  usage: string,
): RestClient {
  const server = (values.server ?? process.env.AGENT_DATA_URL ?? 'http://127.0.0.1:8080').replace(
    /\/+$/,
    '',
  );
  try {
    new URL(server);
  } catch {
    throw new CommandUsageError(`--server ${server} is not a URL`, usage);
  }
  return new RestClient(server, apiKey(values['api-key-file']), (line) =>
    process.stderr.write(`${line}\n`),
  );
}

/** The key from --api-key-file, else AGENT_DATA_API_KEY. */
export function apiKey(file: string | undefined): string | undefined {
  if (file === undefined) return process.env.AGENT_DATA_API_KEY || undefined;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new Error(
      `cannot read the API key file: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
}
