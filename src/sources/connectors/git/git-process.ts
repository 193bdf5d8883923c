import { spawn, type ChildProcess } from 'node:child_process';

/**
 * The `git` command line, run for a source: an argument array and never a shell, with no
 * configuration but ours (no system or user gitconfig, no prompt for a password), every
 * command bounded in time and output, killed with its children when the run is aborted, and
 * every message stripped of the source's secrets.
 */

/** Variables of the server's environment that git and ssh may need (reaching the network). */
const PASSED_THROUGH = [
  'PATH',
  'HOME',
  'TMPDIR',
  'SSH_AUTH_SOCK',
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'ALL_PROXY',
  'all_proxy',
  'NO_PROXY',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'GIT_SSL_CAINFO',
];

/** What one source's git commands run with. */
export interface GitSettings {
  /** The server's environment, from which only {@link PASSED_THROUGH} is kept. */
  readonly baseEnv: NodeJS.ProcessEnv;
  /** More variables (credentials for the helper, `GIT_SSH_COMMAND`). */
  readonly env: Readonly<Record<string, string>>;
  /** Configuration given to every command, as `git -c key=value` would, but unseen in `ps`. */
  readonly config: ReadonlyArray<readonly [string, string]>;
  /** Texts never to show in a message (a token, a key). */
  readonly secrets: readonly string[];
  readonly signal: AbortSignal;
  /** Told of every git process started (its arguments), for a log or a test. */
  readonly onCommand?: (args: readonly string[]) => void;
}

export interface RunOptions {
  /** The repository to run in (the source's cache); none for `ls-remote`. */
  readonly cwd?: string;
  readonly timeoutMs: number;
  /** Standard output beyond this fails the command (it is killed). */
  readonly maxOutputBytes: number;
  /** Exit codes that are an answer, not a failure (`rev-parse --verify --quiet` says 1). */
  readonly answers?: readonly number[];
}

export interface RunResult {
  readonly code: number;
  readonly stdout: Buffer;
}

/** A git command that failed, its message already free of secrets. */
export class GitCommandError extends Error {
  override readonly name = 'GitCommandError';
}

/** Standard error kept for a message: its end, where git says what went wrong. */
const MAX_STDERR_BYTES = 64 * 1024;
/** How long a killed command has to exit on SIGTERM (removing its lock files) before SIGKILL. */
const KILL_GRACE_MS = 2000;

export class Git {
  private readonly env: NodeJS.ProcessEnv;

  constructor(private readonly settings: GitSettings) {
    const env: NodeJS.ProcessEnv = {};
    for (const name of PASSED_THROUGH) {
      if (settings.baseEnv[name] !== undefined) env[name] = settings.baseEnv[name];
    }
    Object.assign(env, {
      // English messages, whatever the server's locale: they end up in a run's record.
      LC_ALL: 'C',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      // `ext::` and other transports run commands; a source reads over these only.
      GIT_ALLOW_PROTOCOL: 'file:http:https:ssh',
      // A declared `path` is a folder's name, not a pathspec with magic (`:(glob)`, `*`).
      GIT_LITERAL_PATHSPECS: '1',
      GIT_CONFIG_COUNT: String(settings.config.length),
      ...settings.env,
    });
    settings.config.forEach(([key, value], index) => {
      env[`GIT_CONFIG_KEY_${index}`] = key;
      env[`GIT_CONFIG_VALUE_${index}`] = value;
    });
    this.env = env;
  }

  /** The text with every secret of the source, and any password in a URL, replaced by `***`. */
  redact(text: string): string {
    let clean = text.replace(/(\/\/[^/@\s:]*:)[^/@\s]*@/g, '$1***@');
    for (const secret of this.settings.secrets) {
      if (secret.length > 0) clean = clean.split(secret).join('***');
    }
    return clean;
  }

  /** The run's signal: aborted when the run is cancelled. */
  get signal(): AbortSignal {
    return this.settings.signal;
  }

  /** Throws the run's abort reason when it has been aborted. */
  throwIfAborted(): void {
    this.settings.signal.throwIfAborted();
  }

  /**
   * Runs `git <args>` to its end and gives its exit code and output. Rejects (naming the
   * command and what git said) when it exits with a code not in `answers`, outlives its
   * timeout or writes too much; rejects with the abort reason when the run is aborted.
   */
  run(args: readonly string[], options: RunOptions): Promise<RunResult> {
    return new Promise<RunResult>((resolve, reject) => {
      const { signal } = this.settings;
      if (signal.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const child = this.spawn(args, options.cwd, ['ignore', 'pipe', 'pipe']);
      const stdout: Buffer[] = [];
      let stdoutBytes = 0;
      let stderr = Buffer.alloc(0);
      let failure: Error | null = null;
      const stop = (error: Error) => {
        failure ??= error;
        killGroup(child);
      };
      const onAbort = () => stop(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(
        () =>
          stop(
            new GitCommandError(
              `git ${args[0]} did not finish within ${durationText(options.timeoutMs)}`,
            ),
          ),
        options.timeoutMs,
      );
      child.stdout!.on('data', (chunk: Buffer) => {
        stdoutBytes += chunk.length;
        if (stdoutBytes > options.maxOutputBytes) {
          stop(
            new GitCommandError(
              `git ${args[0]} wrote more than ${options.maxOutputBytes} bytes, the most a source reads from it`,
            ),
          );
        } else {
          stdout.push(chunk);
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr = Buffer.concat([stderr, chunk]);
        if (stderr.length > MAX_STDERR_BYTES) stderr = stderr.subarray(-MAX_STDERR_BYTES);
      });
      child.on('error', (error) => stop(startFailure(error, options.cwd)));
      child.on('close', (code) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (failure !== null) {
          reject(failure);
        } else if (code === 0 || (code !== null && options.answers?.includes(code))) {
          resolve({ code, stdout: Buffer.concat(stdout) });
        } else {
          reject(new GitCommandError(this.failureMessage(args, code, stderr.toString('utf8'))));
        }
      });
    });
  }

  /**
   * Starts `git <args>` in its own process group (so that killing it kills the transport it
   * started too), killed when the run is aborted. For a long-lived command the caller feeds.
   */
  spawn(
    args: readonly string[],
    cwd: string | undefined,
    stdio: ['ignore' | 'pipe', 'pipe', 'pipe'],
  ): ChildProcess {
    this.settings.onCommand?.(args);
    const child = spawn('git', args, { cwd, env: this.env, stdio, detached: true });
    const onAbort = () => killGroup(child);
    this.settings.signal.addEventListener('abort', onAbort, { once: true });
    child.on('close', () => this.settings.signal.removeEventListener('abort', onAbort));
    return child;
  }

  /** `git fetch failed: <what git said>`, without hints and secrets, short. */
  failureMessage(args: readonly string[], code: number | null, stderr: string): string {
    const said = stderr
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('hint:'))
      .map((line) => line.replace(/^(fatal|error): /, ''))
      .join('; ');
    const text = said === '' ? `exit code ${code ?? 'none (killed)'}` : said;
    return this.redact(
      `git ${args[0]} failed: ${text.length > 600 ? `${text.slice(0, 600)}…` : text}`,
    );
  }
}

/** SIGTERM to the command's process group, SIGKILL if it is still there after a grace time. */
export function killGroup(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const signalGroup = (name: NodeJS.Signals) => {
    try {
      process.kill(-pid, name);
    } catch {
      // Gone already.
    }
  };
  signalGroup('SIGTERM');
  const timer = setTimeout(() => signalGroup('SIGKILL'), KILL_GRACE_MS);
  timer.unref();
  child.once('exit', () => clearTimeout(timer));
}

/** `800 ms`, `2 s`, `10 min`: a timeout as a message says it. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

/** Why git did not start: not installed (`spawn git ENOENT`), or its folder is gone. */
export function startFailure(error: Error, cwd: string | undefined): GitCommandError {
  return new GitCommandError(
    `git could not start${cwd === undefined ? '' : ` in ${cwd}`} (${error.message})`,
  );
}
