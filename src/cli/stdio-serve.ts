import { letGoOfTerminals, standardTerminals } from '../common/terminals';
import { LineSplitter } from '../transport/stdio-lines';

/** What `agent-data mcp` runs over stdin and stdout, in-process or relaying to a server. */
export interface StdioSession {
  /** Handles one line read from stdin. */
  receive(line: string): void;
  /** A line over the size limit, dropped unread. */
  oversized(bytes: number, limit: number): void;
  /** Resolves once every request received so far has been answered. */
  drain(): Promise<void>;
  /** Aborts every running request (the client went away). */
  cancelAll(): void;
}

/** Where protocol messages are written: stdout, as far as the process's memory is concerned. */
export interface StdioOutput {
  /**
   * Writes one line. `false` once more waits in the process to be written than the stream's
   * high-water mark (the client reads slower than lines come): wait for {@link onDrain}.
   */
  write(line: string): boolean;
  /** Calls `resume` once, when what waited has been written (at once if nothing waits). */
  onDrain(resume: () => void): void;
}

/**
 * Keeps the real stdout for protocol messages and returns its writer: whatever else writes
 * there (a library's console.log) goes to stderr from now on. What waits to be written is
 * counted by the stream (its `writableLength`), not in the pipe's kernel buffer: the writer
 * says when it passed the high-water mark, so that a session can stop adding to it.
 */
export function takeStdout(): StdioOutput {
  const stream = process.stdout;
  const write = stream.write.bind(stream);
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  // One 'drain' listener for every waiter: a session may hold many streams.
  const waiting: Array<() => void> = [];
  stream.on('drain', () => {
    for (const resume of waiting.splice(0)) resume();
  });
  return {
    write: (line) => write(line),
    onDrain: (resume) => {
      if (stream.writableNeedDrain) waiting.push(resume);
      else queueMicrotask(resume);
    },
  };
}

/** Pauses (`true`) or resumes (`false`) reading stdin: a session's backpressure. */
export function pauseStdin(paused: boolean): void {
  if (paused) process.stdin.pause();
  else process.stdin.resume();
}

/**
 * Reads stdin until it ends or a signal comes; answers what was received before ending.
 * On SIGINT/SIGTERM (and SIGHUP, a closed terminal, when `hangUpStops`: not where it means
 * "read the policy file again"), or when stdin or stdout fail (the client went away), the
 * running requests are aborted first, and stdin is read no more: a client that keeps it open
 * would otherwise keep the process running after its session ended.
 */
export function serveStdio(
  session: StdioSession,
  maxBytes: number,
  { hangUpStops }: { hangUpStops: boolean },
): Promise<void> {
  return new Promise((resolve) => {
    const lines = new LineSplitter(
      maxBytes,
      (line) => session.receive(line),
      (bytes) => session.oversized(bytes, maxBytes),
    );
    const terminals = standardTerminals();
    let finishing: Promise<void> | undefined;
    const finish = () =>
      (finishing ??= (async () => {
        lines.end();
        await session.drain();
        resolve();
      })());
    const stop = (signal?: NodeJS.Signals) => {
      session.cancelAll();
      process.stdin.destroy();
      if (signal === 'SIGHUP') process.once('exit', () => letGoOfTerminals(terminals));
      void finish();
    };
    process.stdin.on('data', (chunk: Buffer) => lines.push(chunk));
    process.stdin.once('end', () => void finish());
    process.stdin.once('error', () => stop());
    process.stdout.once('error', () => stop());
    // Every time, not once: a second signal without a listener would end the process before
    // its PostgreSQL is stopped.
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (hangUpStops) process.on('SIGHUP', stop);
  });
}
