import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Piscina } from 'piscina';
import type { TextKind } from '../../models/onnx-encoder';
import type { ModelTask, ModelThreadData } from './model.thread';

/**
 * Passage threads that have embedded nothing for this long are stopped (their model and
 * ONNX Runtime's buffers freed); they start again, and load the model again, on demand.
 */
const PASSAGE_IDLE_MS = 5 * 60_000;
/** Passage threads run at a lower scheduling priority: requests (and queries) come first. */
const PASSAGE_NICE = 10;
/** Texts per passage task: a task's run is the unit a waiting query's turn comes after. */
export const PASSAGES_PER_TASK = 16;
/**
 * Query threads at most: one is kept loaded; a second starts when searches come faster than
 * one thread embeds them (ten at a time queued some 35 ms behind each other on one), and
 * stops after a minute without work.
 */
const QUERY_THREADS = Math.min(2, availableParallelism());
const SECOND_QUERY_IDLE_MS = 60_000;

/**
 * The worker threads that run an embedding model, so that ONNX Runtime (which holds its
 * calling thread for a whole run) never holds the request loop:
 *
 * - a **query** thread, at normal priority and with one ONNX Runtime thread, kept loaded: a
 *   search's query is embedded at once, never behind a batch of passages (and a second one
 *   while searches come faster than one embeds them);
 * - one **passage** thread at a lower priority, with `passageThreads` ONNX Runtime threads,
 *   taking the pipeline's batches {@link PASSAGES_PER_TASK} texts at a time, stopped when idle.
 *
 * Each holds its own copy of the model (a q8 model of 384 dimensions: some 35 MB of weights).
 */
export class ModelThreads {
  private readonly query: Piscina;
  private readonly passages: Piscina;

  constructor(
    data: Omit<ModelThreadData, 'threads'>,
    options: { readonly passageThreads: number },
  ) {
    const filename = threadFile();
    this.query = new Piscina({
      filename,
      name: 'default',
      workerData: { ...data, threads: 1 } satisfies ModelThreadData,
      minThreads: 1,
      maxThreads: QUERY_THREADS,
      idleTimeout: SECOND_QUERY_IDLE_MS,
    });
    this.passages = new Piscina({
      filename,
      name: 'default',
      workerData: { ...data, threads: options.passageThreads } satisfies ModelThreadData,
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: PASSAGE_IDLE_MS,
      niceIncrement: PASSAGE_NICE,
    });
  }

  /** Loads the model on the query thread (the first search need not wait for it). */
  async load(): Promise<void> {
    await this.query.run({ texts: [], kind: 'query' } satisfies ModelTask);
  }

  /**
   * The unit vectors of `texts`, in order (`dimensions` floats each, back to back). `signal`
   * is looked at between tasks only: a thread stopped in the middle of an ONNX Runtime run
   * takes the whole process down (the native error ends in std::terminate), so a task once
   * started runs to its end (16 passages at most, a second or two).
   */
  async embed(
    texts: readonly string[],
    kind: TextKind,
    signal?: AbortSignal,
  ): Promise<Float32Array> {
    if (texts.length === 0) return new Float32Array(0);
    const pool = kind === 'query' ? this.query : this.passages;
    const parts: Float32Array[] = [];
    const step = kind === 'query' ? texts.length : PASSAGES_PER_TASK;
    for (let at = 0; at < texts.length; at += step) {
      signal?.throwIfAborted();
      const task: ModelTask = { texts: texts.slice(at, at + step), kind };
      parts.push((await pool.run(task)) as Float32Array);
    }
    if (parts.length === 1) return parts[0];
    const all = new Float32Array(parts.reduce((n, part) => n + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      all.set(part, offset);
      offset += part.length;
    }
    return all;
  }

  /** Threads running, and tasks waiting for the passage thread. */
  get state(): { threads: number; queued: number } {
    return {
      threads: this.query.threads.length + this.passages.threads.length,
      queued: this.passages.queueSize,
    };
  }

  /** Drops the tasks waiting, lets the runs under way end (see {@link embed}), then stops. */
  async close(): Promise<void> {
    await Promise.all([this.query.close({ force: true }), this.passages.close({ force: true })]);
  }
}

/** The compiled thread entry, or its TypeScript loader when running from sources. */
function threadFile(): string {
  return __filename.endsWith('.ts')
    ? join(__dirname, 'model.thread-ts.js')
    : join(__dirname, 'model.thread.js');
}
