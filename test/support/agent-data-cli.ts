import { execFile } from 'node:child_process';
import { join } from 'node:path';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const LAUNCHER = join(__dirname, 'agent-data-src.js');

/**
 * `agent-data ARGS` as a process run from the sources (agent-data-src.js), with `env` over
 * the test's environment: its exit code and output. A process rather than main() in the
 * test: ONNX Runtime's tensors are not those of jest's sandbox.
 */
export function agentData(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [LAUNCHER, ...args],
      { env: { ...process.env, ...env }, maxBuffer: 16 * 2 ** 20 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}
