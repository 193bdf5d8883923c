// Starting the real server as a child process, as `npm start` does, for tests of the process itself.
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import request from 'supertest';
import { waitFor } from './support/wait';

const ROOT = join(__dirname, '..');

/** A server process started like `npm start`, from the TypeScript sources. */
export interface ServerProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

export function startServer(env: Record<string, string>): ServerProcess {
  let stdout = '';
  let stderr = '';
  // A minimal environment: nothing leaks in from the shell running the tests.
  const child = spawn(
    process.execPath,
    ['-r', join(ROOT, 'test', 'support', 'from-sources.js'), join(ROOT, 'src', 'main.ts')],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } },
  );
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exit = once(child, 'exit').then(([code]) => code as number | null);
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

/** Resolves once /health/live answers, or rejects if the process exits first. */
export async function live(server: ServerProcess, baseUrl: string): Promise<void> {
  let exited = false;
  server.exit.then(() => (exited = true));
  await waitFor(
    async () => {
      if (exited) throw new Error(`server exited during start-up:\n${server.stderr()}`);
      return request(baseUrl)
        .get('/health/live')
        .then((r) => r.status === 200)
        .catch(() => false);
    },
    '/health/live to answer',
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}
