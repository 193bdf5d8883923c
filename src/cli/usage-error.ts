/**
 * A wrong command or option of a command that has its own help (`models`, `sources`): exit
 * code 2, the message and then `usage`, the help of what was asked for.
 */
export class CommandUsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

/** Prints a command's help; its exit code. */
export function help(usage: string): number {
  out(usage);
  return 0;
}

/** A line on standard output. */
export function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** A line on standard error. */
export function err(line: string): void {
  process.stderr.write(`${line}\n`);
}
