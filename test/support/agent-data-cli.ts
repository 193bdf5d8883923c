import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { main } from '../../src/cli/main';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

type Env = Readonly<Record<string, string>>;

const LAUNCHER = join(__dirname, 'agent-data-src.js');

/**
 * `agent-data ARGS` as a process run from the sources (agent-data-src.js), with `env` over
 * the test's environment: its exit code and output. Whatever loads or runs a model needs
 * one: ONNX Runtime's arrays and errors are not those of jest's sandbox.
 */
export function agentDataProcess(args: readonly string[], env: Env): Promise<CliRun> {
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

/**
 * `agent-data ARGS` run by main() in this process, `env` over the environment while it runs:
 * the same exit code and output as the process gives, without the second or so a process
 * takes to compile the sources. For the commands that never load a model.
 */
export async function agentData(args: readonly string[], env: Env): Promise<CliRun> {
  const saved = { ...process.env };
  const output = { stdout: '', stderr: '' };
  const capture = (stream: 'stdout' | 'stderr') =>
    jest.spyOn(process[stream], 'write').mockImplementation((chunk: string | Uint8Array) => {
      output[stream] += chunk.toString();
      return true;
    });
  const spies = [capture('stdout'), capture('stderr')];
  Object.assign(process.env, env);
  try {
    const code = await main(args);
    return { code, ...output };
  } finally {
    spies.forEach((spy) => spy.mockRestore());
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  }
}
