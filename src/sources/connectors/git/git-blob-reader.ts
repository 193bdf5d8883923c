import type { ChildProcess } from 'node:child_process';
import { durationText, GitCommandError, killGroup, startFailure, type Git } from './git-process';

interface Request {
  readonly hash: string;
  readonly maxBytes: number;
  readonly resolve: (bytes: Buffer) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Reads blobs of the source's cache through one `git cat-file --batch` process rather than a
 * process a blob (starting git costs milliseconds: minutes for a large first run). The
 * process starts at the first read and stops once no read has come for a while, or when the
 * run is aborted; a read never takes more than the size the tree gave for the blob.
 */
export class BlobReader {
  private process: ChildProcess | null = null;
  private readonly queue: Request[] = [];
  /** The answer being read: its header's end not yet seen, or the blob's bytes so far. */
  private header = Buffer.alloc(0);
  private body: Buffer | null = null;
  private bodyLength = 0;
  /** Bytes still to pass over of an answer that is not returned (too large, not a blob). */
  private skipping = 0;
  private skipReason: Error | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private requestTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly git: Git,
    private readonly repository: string,
    private readonly timeoutMs: number,
    private readonly idleMs = 2000,
  ) {}

  /** The blob's bytes. Rejects when it is missing, larger than `maxBytes`, or git fails. */
  read(hash: string, maxBytes: number): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      try {
        this.git.throwIfAborted();
        if (!/^[0-9a-f]{40,64}$/.test(hash)) throw new Error(`not a blob hash: ${hash}`);
      } catch (error) {
        reject(error as Error);
        return;
      }
      if (this.idleTimer !== null) clearTimeout(this.idleTimer);
      this.idleTimer = null;
      const child = this.process ?? this.start();
      holdOpen(child, true);
      this.queue.push({ hash, maxBytes, resolve, reject });
      if (this.queue.length === 1) this.armRequestTimer();
      child.stdin!.write(`${hash}\n`);
    });
  }

  /** Lets the process end once idle; stops it at once (rejecting reads waiting) otherwise. */
  close(): void {
    if (this.process === null) return;
    if (this.queue.length > 0) {
      this.fail(new Error('the blob reader was closed'));
      return;
    }
    this.process.stdin!.end();
    this.process = null;
  }

  private start(): ChildProcess {
    const child = this.git.spawn(['cat-file', '--batch'], this.repository, [
      'pipe',
      'pipe',
      'pipe',
    ]);
    this.process = child;
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4096);
    });
    child.stdin!.on('error', () => {
      // The process has gone: 'close' rejects what waits.
    });
    child.on('error', (error) => this.fail(startFailure(error, this.repository)));
    child.on('close', (code) => {
      if (this.process !== child) return;
      this.process = null;
      const reason = this.git.signal.aborted
        ? (this.git.signal.reason as Error)
        : new GitCommandError(this.git.failureMessage(['cat-file'], code, stderr));
      this.rejectAll(reason);
    });
    return child;
  }

  /** Takes git's output: `<hash> blob <size>\n<bytes>\n` per read, `<hash> missing\n` if none. */
  private receive(chunk: Buffer): void {
    let data = chunk;
    while (data.length > 0) {
      const request = this.queue[0];
      if (request === undefined) {
        this.fail(new GitCommandError('git cat-file wrote more than was asked'));
        return;
      }
      if (this.skipping > 0) {
        const take = Math.min(this.skipping, data.length);
        this.skipping -= take;
        data = data.subarray(take);
        if (this.skipping === 0) this.settle(this.skipReason!);
        continue;
      }
      if (this.body === null) {
        const newline = data.indexOf(10);
        if (newline === -1) {
          this.header = Buffer.concat([this.header, data]);
          if (this.header.length > 256)
            this.fail(new GitCommandError('git cat-file wrote a header too long'));
          return;
        }
        const header = Buffer.concat([this.header, data.subarray(0, newline)]).toString('latin1');
        this.header = Buffer.alloc(0);
        data = data.subarray(newline + 1);
        const match = /^([0-9a-f]+) (\w+) (\d+)$/.exec(header);
        if (match === null) {
          this.settle(new Error(`the blob ${request.hash} is not in the cache (${header})`));
          continue;
        }
        const size = Number(match[3]);
        if (match[2] !== 'blob' || size > request.maxBytes) {
          // Passed over without being kept in memory.
          this.skipping = size + 1;
          this.skipReason = new Error(
            `the object ${request.hash} is a ${match[2]} of ${size} bytes, not a blob of at most ${request.maxBytes}`,
          );
          continue;
        }
        this.body = Buffer.allocUnsafe(size + 1);
        this.bodyLength = 0;
      }
      const take = Math.min(this.body.length - this.bodyLength, data.length);
      data.copy(this.body, this.bodyLength, 0, take);
      this.bodyLength += take;
      data = data.subarray(take);
      if (this.bodyLength === this.body.length) {
        const bytes = this.body.subarray(0, this.body.length - 1);
        this.body = null;
        this.settle(bytes);
      }
    }
  }

  private settle(result: Buffer | Error): void {
    const request = this.queue.shift()!;
    if (result instanceof Error) request.reject(result);
    else request.resolve(result);
    this.armRequestTimer();
    if (this.queue.length === 0) {
      if (this.process !== null) holdOpen(this.process, false);
      this.idleTimer = setTimeout(() => this.close(), this.idleMs);
      this.idleTimer.unref();
    }
  }

  /** Each read has the command timeout from the moment it is the one git works on. */
  private armRequestTimer(): void {
    if (this.requestTimer !== null) clearTimeout(this.requestTimer);
    this.requestTimer = null;
    if (this.queue.length === 0) return;
    this.requestTimer = setTimeout(
      () =>
        this.fail(
          new GitCommandError(
            `git cat-file did not give a blob within ${durationText(this.timeoutMs)}`,
          ),
        ),
      this.timeoutMs,
    );
    this.requestTimer.unref();
  }

  /** Stops the process and rejects every read waiting with the reason. */
  private fail(reason: Error): void {
    const child = this.process;
    this.process = null;
    if (child !== null) {
      child.stdin!.end();
      killGroup(child);
    }
    this.rejectAll(reason);
  }

  private rejectAll(reason: Error): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    if (this.requestTimer !== null) clearTimeout(this.requestTimer);
    this.idleTimer = null;
    this.requestTimer = null;
    this.header = Buffer.alloc(0);
    this.body = null;
    this.skipping = 0;
    for (const request of this.queue.splice(0)) request.reject(reason);
  }
}

/**
 * Whether the process (and its pipes) keeps Node running: while a read waits, and not while
 * it idles before it is stopped, so that an idle reader never holds a finishing process.
 */
function holdOpen(child: ChildProcess, hold: boolean): void {
  for (const handle of [child, child.stdin, child.stdout, child.stderr]) {
    const refable = handle as unknown as { ref?: () => void; unref?: () => void } | null;
    if (hold) refable?.ref?.();
    else refable?.unref?.();
  }
}
