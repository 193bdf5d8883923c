import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GitSourceDeclaration } from '../../source-declaration';

/**
 * How git reaches a source's repository: the URL checked, and its credentials (given by
 * reference in the declaration) handed to git without ever being in a URL, an argument or a
 * message. For https a credential helper answers git's request with the token, for the
 * repository's host only and only when the server asks (a 401); for ssh a key file with
 * `IdentitiesOnly`, and `BatchMode` so that nothing waits for a passphrase or a host key.
 */

export interface RemoteAccess {
  /** Variables for git's environment. */
  readonly env: Record<string, string>;
  /** Configuration for every command (the credential helper). */
  readonly config: Array<[string, string]>;
  /** The credentials' texts, to be redacted from every message. */
  readonly secrets: string[];
  /** Removes what the run wrote (a key given by an environment variable). Idempotent. */
  dispose(): Promise<void>;
}

/** A URL's scheme, `scp` for the `user@host:path` form. */
export function schemeOf(url: string): 'https' | 'http' | 'ssh' | 'file' | 'scp' {
  const match = /^(https?|ssh|file):\/\//.exec(url);
  return match ? (match[1] as 'https' | 'http' | 'ssh' | 'file') : 'scp';
}

/**
 * The credential helper, run by git through a shell: it answers `get` with the username and
 * token git passes it in its environment, only for the repository's own host (not a host a
 * redirect leads to), and ignores `store` and `erase`.
 */
const CREDENTIAL_HELPER =
  '!f() { test "$1" = get || exit 0; host=; ' +
  'while IFS= read -r line; do case "$line" in host=*) host=${line#host=};; esac; done; ' +
  'test "$host" = "$AGENT_DATA_GIT_HOST" || exit 0; ' +
  'printf "username=%s\\npassword=%s\\n" "$AGENT_DATA_GIT_USERNAME" "$AGENT_DATA_GIT_TOKEN"; }; f';

/** Hosts a token may be sent to over plain http: this machine only. */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || /^127\./.test(hostname) || hostname === '[::1]';
}

/** Quotes a word for the shell git runs `GIT_SSH_COMMAND` with. */
function shellWord(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Checks the declaration's URL and credentials and prepares them for git. Throws naming the
 * problem (a password in the URL, a token for ssh, an unset variable), never its value.
 */
export async function remoteAccess(
  source: GitSourceDeclaration,
  env: NodeJS.ProcessEnv,
): Promise<RemoteAccess> {
  const scheme = schemeOf(source.url);
  const parsed = scheme === 'scp' ? null : new URL(source.url);
  if (parsed !== null && parsed.password !== '') {
    throw new Error(
      'the URL holds a password: give it by reference instead (token: { env } or { file })',
    );
  }
  const secrets: string[] = [];
  const access: RemoteAccess = {
    env: {
      GIT_SSH_COMMAND: 'ssh -o BatchMode=yes -o ConnectTimeout=30',
      GIT_SSH_VARIANT: 'ssh',
    },
    config: [['credential.helper', '']],
    secrets,
    dispose: () => Promise.resolve(),
  };
  if (source.token !== undefined) {
    if (parsed === null || (scheme !== 'https' && scheme !== 'http')) {
      throw new Error('a token is for an https URL (an ssh URL takes ssh_key)');
    }
    if (scheme === 'http' && !isLoopback(parsed.hostname)) {
      throw new Error('a token is sent over https only (plain http only to this machine)');
    }
    const token = await secretOf(source.token, env, 'token');
    if (/[\u0000-\u001f\u007f]/.test(token)) {
      throw new Error('the token holds a control character or a line break');
    }
    secrets.push(token);
    access.config.push(['credential.helper', CREDENTIAL_HELPER]);
    Object.assign(access.env, {
      AGENT_DATA_GIT_HOST: parsed.host,
      AGENT_DATA_GIT_USERNAME:
        source.username ?? (decodeURIComponent(parsed.username) || 'x-access-token'),
      AGENT_DATA_GIT_TOKEN: token,
    });
  }
  if (source.ssh_key !== undefined) {
    if (scheme !== 'ssh' && scheme !== 'scp') {
      throw new Error('ssh_key is for an ssh URL (ssh://… or user@host:path)');
    }
    let keyFile: string;
    if (source.ssh_key.file !== undefined) {
      keyFile = source.ssh_key.file;
      await readFile(keyFile).catch((error: NodeJS.ErrnoException) => {
        throw new Error(
          `the ssh key file ${keyFile} cannot be read (${error.code ?? error.message})`,
        );
      });
    } else {
      const key = await secretOf(source.ssh_key, env, 'ssh_key');
      secrets.push(key.trim());
      // ssh reads a key from a file only: one private to this run, removed after it.
      const dir = await mkdtemp(join(tmpdir(), 'agent-data-ssh-'));
      keyFile = join(dir, 'key');
      await writeFile(keyFile, key.endsWith('\n') ? key : `${key}\n`, { mode: 0o600 });
      access.dispose = () => rm(dir, { recursive: true, force: true });
    }
    access.env.GIT_SSH_COMMAND += ` -i ${shellWord(keyFile)} -o IdentitiesOnly=yes -o IdentityAgent=none`;
  }
  return access;
}

/** A secret's text, from the environment variable or the file it names. */
async function secretOf(
  ref: { env?: string; file?: string },
  env: NodeJS.ProcessEnv,
  field: string,
): Promise<string> {
  if (ref.env !== undefined) {
    const value = env[ref.env];
    if (value === undefined || value === '') {
      throw new Error(`the environment variable ${ref.env} (${field}) is not set`);
    }
    return field === 'token' ? value.trim() : value;
  }
  const file = ref.file!;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(
      `the ${field} file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (text.trim() === '') throw new Error(`the ${field} file ${file} is empty`);
  return field === 'token' ? text.trim() : text;
}
