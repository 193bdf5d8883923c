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
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new CommandUsageError(`--server ${server} is not a URL`, usage);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CommandUsageError(`--server ${server} is not an http:// or https:// URL`, usage);
  }
  return new RestClient(server, apiKey(values['api-key-file']), (line) =>
    process.stderr.write(`${line}\n`),
  );
}

/** The key from --api-key-file, else AGENT_DATA_API_KEY. */
export function apiKey(file: string | undefined): string | undefined {
  if (file === undefined) return process.env.AGENT_DATA_API_KEY || undefined;
  let key: string;
  try {
    key = readFileSync(file, 'utf8').trim();
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'not readable' : code;
    throw new Error(`cannot read the API key file ${file}: ${why ?? 'error'}`);
  }
  // An empty file would send no key at all, and every answer would be "unauthenticated".
  if (key === '') throw new Error(`the API key file ${file} is empty`);
  return key;
}
