import { closeSync } from 'node:fs';
import { isatty } from 'node:tty';

/** The standard streams (0, 1, 2) that are a terminal now: asked before one may close. */
export function standardTerminals(): number[] {
  return [0, 1, 2].filter((fd) => isatty(fd));
}

/**
 * Closes the standard streams that were a terminal, once a closed terminal (SIGHUP) stopped
 * the process. Node 20 puts a terminal's settings back as it exits and aborts (a native
 * stack, exit by SIGABRT) when that fails, which it does once the terminal is gone; a stream
 * it finds closed it leaves alone. Later Node versions ignore the failure.
 */
export function letGoOfTerminals(terminals: readonly number[]): void {
  for (const fd of terminals) {
    try {
      closeSync(fd);
    } catch {
      // Already closed: nothing to put back either.
    }
  }
}
