import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { waitFor } from '../support/wait';

export const ROOT = join(__dirname, '..', '..');

export interface NodeProcess {
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  readonly exited: Promise<number | string>;
}

/**
 * Runs a TypeScript entry point of `src/` as its own Node.js process, the way the image
 * runs the compiled one. The environment is `env` alone (plus PATH and HOME), so nothing
 * from the developer's shell or the jest worker leaks into the configuration.
 */
export function runEntryPoint(entry: string, env: Record<string, string>): NodeProcess {
  const child = spawn(
    process.execPath,
    ['-r', join(ROOT, 'test', 'support', 'from-sources.js'), join(ROOT, 'src', entry)],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return { child, output: () => output, exited };
}

/** Polls `url` until it answers 200, the process exits, or `attempts` × 100 ms have passed. */
export async function waitUntilServing(
  url: string,
  process: NodeProcess,
  attempts = 600,
): Promise<void> {
  let ended = false;
  process.exited.then(() => (ended = true));
  await waitFor(
    async () => {
      if (ended) throw new Error('the process exited');
      // Not listening yet: a refused connection is "not yet".
      return (await fetch(url).catch(() => undefined))?.status === 200;
    },
    `${url} to answer 200`,
    { timeoutMs: attempts * 100, intervalMs: 100 },
  ).catch((error: Error) => {
    throw new Error(`${error.message}; process output:\n${process.output()}`);
  });
}
