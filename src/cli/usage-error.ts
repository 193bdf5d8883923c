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
