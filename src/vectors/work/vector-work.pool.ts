import { Injectable, BeforeApplicationShutdown } from '@nestjs/common';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Piscina } from 'piscina';
import { AppConfig } from '../../config/app-config';
import type { LexicalRecord } from '../lexical/lexical-record';
import type { LsaModel, LsaOptions, LsaTrainer, TrainingDocument } from '../semantic/lsa';
import type { ChunkerOptions } from './markdown-chunker';
import {
  splitVectors,
  type EmbedTask,
  type LsaTask,
  type PreparedChunk,
  type PrepareResult,
  type PrepareTask,
  type WorkDocument,
} from './vector-work';

/** Threads sit idle this long before they are stopped (they start again on demand). */
const IDLE_MS = 60_000;
/**
 * The threads run at a lower scheduling priority (nice +10, through `@napi-rs/nice`): when
 * the machine's cores are all busy, the request loop gets them first and vector work waits.
 */
const NICE_INCREMENT = 10;
/** Characters of document bodies per task (see {@link VectorWorkPool.prepare}). */
const TASK_CHARS = 512 * 1024;
/**
 * The heap a chunking thread may grow to: its tasks make much short-lived garbage (strings of
 * chunks, maps of terms) that V8 would otherwise collect only once the heap has grown to a
 * share of the machine's memory, which the process's resident size showed (some 400 MB more
 * while 20 000 documents arrived).
 */
const WORK_HEAP_MB = 96;
/** A trained model's thread stops this soon after: its heap (some 300 MB at 5 000 documents) goes with it. */
const TRAINING_IDLE_MS = 1000;
/** The spare cores' threads (see {@link VectorWorkPool.prepare}'s `spare`) stop this soon after. */
const SPARE_IDLE_MS = 5000;

/**
 * The worker threads that chunk documents and compute local embeddings, so that this CPU
 * work never holds up requests (docs/operations.md). `VECTOR_WORK_THREADS` threads (by default one
 * less than the cores, at least one), started on first use; at most four tasks per thread
 * wait in line, beyond which a task is refused at once (the sync worker then gives its
 * documents back and tries again).
 */
@Injectable()
export class VectorWorkPool implements BeforeApplicationShutdown, LsaTrainer {
  private readonly pool: Piscina;
  /** The latent-semantic model's training, on a thread of its own that stops once done. */
  private readonly training: Piscina;
  private readonly threads: number;
  /**
   * Threads on the cores VECTOR_WORK_THREADS leaves to the request loop, for work that has
   * the machine to itself (a restore's lexical pass, on a knowledge base that was empty).
   */
  private readonly spare: Piscina | undefined;
  private readonly spareThreads: number;

  constructor(config: AppConfig) {
    this.threads = config.vectorWorkThreads;
    this.pool = chunkingThreads(config.vectorWorkThreads, IDLE_MS);
    this.spareThreads = Math.max(0, Math.min(4, availableParallelism()) - this.threads);
    this.spare =
      this.spareThreads === 0 ? undefined : chunkingThreads(this.spareThreads, SPARE_IDLE_MS);
    this.training = new Piscina({
      filename: threadFile(),
      name: 'default',
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: TRAINING_IDLE_MS,
      niceIncrement: NICE_INCREMENT,
    });
  }

  /**
   * Chunks and analyses `documents` (their lexical records); with `localDimensions`, also embeds every chunk with the local
   * embedder in the same pass. Documents go to the threads in tasks of about
   * {@link TASK_CHARS} characters (one per thread at a time), so that each result comes back
   * as a message the request loop takes in a few milliseconds, not one of sixteen
   * megabytes. Rejects when a task fails or `signal` aborts it. With `spare`, the cores left
   * to the request loop take tasks too.
   */
  async prepare(
    documents: readonly WorkDocument[],
    chunker: ChunkerOptions,
    localDimensions: number | undefined,
    signal?: AbortSignal,
    spare = false,
  ): Promise<{ chunks: PreparedChunk[][]; records: LexicalRecord[]; vectors?: Float32Array[] }> {
    const groups = inGroups(documents, TASK_CHARS);
    const results: PrepareResult[] = new Array(groups.length);
    let next = 0;
    const lane = async (pool: Piscina) => {
      while (next < groups.length) {
        const at = next++;
        const task: PrepareTask = {
          kind: 'prepare',
          documents: groups[at],
          chunker,
          localDimensions,
        };
        results[at] = (await pool.run(task, { signal })) as PrepareResult;
      }
    };
    const pools = [
      ...Array.from({ length: this.threads }, () => this.pool),
      ...Array.from({ length: spare && this.spare ? this.spareThreads : 0 }, () => this.spare!),
    ];
    await Promise.all(pools.slice(0, groups.length).map(lane));
    return {
      chunks: results.flatMap((result) => result.chunks),
      records: results.flatMap((result) => result.records),
      ...(localDimensions === undefined
        ? {}
        : {
            vectors: results.flatMap((result) =>
              result.vectors ? splitVectors(result.vectors, localDimensions) : [],
            ),
          }),
    };
  }

  /** Local embeddings of `texts`, one vector each, in order. */
  async embed(
    texts: readonly string[],
    dimensions: number,
    signal?: AbortSignal,
  ): Promise<Float32Array[]> {
    const task: EmbedTask = { kind: 'embed', texts, dimensions };
    return splitVectors((await this.pool.run(task, { signal })) as Float32Array, dimensions);
  }

  /** A latent-semantic model trained on a thread (some seconds for 5 000 documents). */
  async trainLsa(documents: readonly TrainingDocument[], options: LsaOptions): Promise<LsaModel> {
    const task: LsaTask = { kind: 'lsa', documents, options };
    return (await this.training.run(task)) as LsaModel;
  }

  /** Threads running, tasks waiting, share of time busy. */
  get state(): { threads: number; queued: number; utilization: number; completed: number } {
    return {
      threads: this.pool.threads.length,
      queued: this.pool.queueSize,
      utilization: Math.round(this.pool.utilization * 1000) / 1000,
      completed: this.pool.completed,
    };
  }

  /**
   * After every module's destroy hook: the pipeline stops first (its module's hook runs after
   * this provider's would), and a batch it stops mid-way goes back to the queue as stopped,
   * where threads ended under it would fail it and count an attempt against its documents.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([this.pool.destroy(), this.training.destroy(), this.spare?.destroy()]);
  }
}

/** Consecutive runs of documents of at most `chars` characters of body (a bigger one alone). */
function inGroups(documents: readonly WorkDocument[], chars: number): WorkDocument[][] {
  const groups: WorkDocument[][] = [];
  let size = Infinity;
  for (const document of documents) {
    if (size + document.body.length > chars) {
      groups.push([]);
      size = 0;
    }
    groups[groups.length - 1].push(document);
    size += document.body.length;
  }
  return groups;
}

/** The compiled thread entry, or its TypeScript loader when running from sources. */
function threadFile(): string {
  return __filename.endsWith('.ts')
    ? join(__dirname, 'vector-work.thread-ts.js')
    : join(__dirname, 'vector-work.thread.js');
}

/**
 * Threads that chunk, analyse and embed (niced, their heaps bounded), at most `threads` of
 * them with four tasks queued each, gone after `idleMs` without work.
 */
function chunkingThreads(threads: number, idleMs: number): Piscina {
  return new Piscina({
    filename: threadFile(),
    name: 'default',
    workerData: { chunks: true },
    minThreads: 0,
    maxThreads: threads,
    maxQueue: threads * 4,
    idleTimeout: idleMs,
    niceIncrement: NICE_INCREMENT,
    resourceLimits: { maxOldGenerationSizeMb: WORK_HEAP_MB, maxYoungGenerationSizeMb: 16 },
  });
}
