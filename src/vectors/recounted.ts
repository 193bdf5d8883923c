/**
 * Below this many documents a count is made for every answer, however long it took (a busy
 * machine can take 100 ms to count a few thousand; a restore's progress is polled for).
 */
const SMALL_DOCUMENTS = 50_000;
/** A count is made again once it is older than this many times what it took... */
const REUSE_FACTOR = 20;
/**
 * ...but never older than this: `agent-data restore` gives up once the lexical coverage has
 * stood still for a minute, so a figure must be counted again well within that.
 */
const MAX_AGE_MS = 30_000;

/** A figure and when it was counted. */
export interface Counted<T> {
  readonly value: T;
  /** Milliseconds since the epoch at which the count began. */
  readonly countedAt: number;
}

/**
 * A figure whose count reads every document (the status's counts per vector status and its
 * lexical coverage), polled by people and scripts. On a small knowledge base it is counted for
 * each answer. On one of {@link SMALL_DOCUMENTS} documents or more, an answer gives the last
 * count at once, and once that is {@link REUSE_FACTOR} times older than it took to count (at
 * most {@link MAX_AGE_MS}) it starts the next count in the background; a count twice as old is
 * not given, the answer waits for a new one. While polled, an answer costs no count, and
 * polling spends at most a twentieth of one connection's time counting until a count takes
 * 1.5 s (some hundreds of thousands of documents: docs/performance.md), then one count every
 * 30 s. Callers share a count in progress; a failed count is not kept (one in the background
 * leaves the last one, older).
 */
export class Recounted<T> {
  private last: Counted<T> | undefined;
  private lastTookMs = 0;
  private running: Promise<Counted<T>> | undefined;

  /** `documents`: how many documents a count read, from the figure it gave. */
  constructor(
    private readonly count: () => Promise<T>,
    private readonly documents: (value: T) => number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The figure, counted now or the last count, as the class says; with when it was counted. */
  read(): Promise<Counted<T>> {
    const last = this.last;
    if (last === undefined || this.documents(last.value) < SMALL_DOCUMENTS) return this.start();
    const age = this.now() - last.countedAt;
    const window = Math.min(MAX_AGE_MS, this.lastTookMs * REUSE_FACTOR);
    // Nobody asked for a while (a page opened again, a knowledge base grown meanwhile): the
    // last count is too old to give.
    if (age >= 2 * window) return this.start();
    if (age >= window) this.start().catch(() => undefined);
    return Promise.resolve(last);
  }

  private start(): Promise<Counted<T>> {
    this.running ??= this.recount().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async recount(): Promise<Counted<T>> {
    const countedAt = this.now();
    const value = await this.count();
    this.lastTookMs = this.now() - countedAt;
    this.last = { value, countedAt };
    return this.last;
  }
}
