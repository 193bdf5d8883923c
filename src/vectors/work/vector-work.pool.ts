import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { join } from 'node:path';
import { Piscina } from 'piscina';
import { AppConfig } from '../../config/app-config';
import type { ChunkerOptions } from '../markdown-chunker';
import {
  splitVectors,
  type EmbedTask,
  type PreparedChunk,
  type PrepareResult,
  type PrepareTask,
  type WorkDocument,
} from './vector-work';

/** Threads sit idle this long before they are stopped (they start again on demand). */
const IDLE_MS = 60_000;

/**
 * The worker threads that chunk documents and compute local embeddings, so that this CPU
 * work never holds up requests (SPEC §8b). `VECTOR_WORK_THREADS` threads (by default one
 * less than the cores, at least one), started on first use; at most four tasks per thread
 * wait in line, beyond which a task is refused at once (the sync worker then gives its
 * documents back and tries again).
 */
@Injectable()
export class VectorWorkPool implements OnModuleDestroy {
  private readonly pool: Piscina;

  constructor(config: AppConfig) {
    this.pool = new Piscina({
      filename: threadFile(),
      name: 'default',
      minThreads: 0,
      maxThreads: config.vectorWorkThreads,
      maxQueue: config.vectorWorkThreads * 4,
      idleTimeout: IDLE_MS,
    });
  }

  /**
   * Chunks `documents`; with `localDimensions`, also embeds every chunk with the local
   * embedder in the same pass. Rejects when the task fails or `signal` aborts it.
   */
  async prepare(
    documents: readonly WorkDocument[],
    chunker: ChunkerOptions,
    localDimensions: number | undefined,
    signal?: AbortSignal,
  ): Promise<{ chunks: PreparedChunk[][]; vectors?: Float32Array[] }> {
    const task: PrepareTask = { kind: 'prepare', documents, chunker, localDimensions };
    const result = (await this.pool.run(task, { signal })) as PrepareResult;
    return {
      chunks: result.chunks,
      ...(result.vectors === undefined || localDimensions === undefined
        ? {}
        : { vectors: splitVectors(result.vectors, localDimensions) }),
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

  /** Threads running, tasks waiting, share of time busy. */
  get state(): { threads: number; queued: number; utilization: number; completed: number } {
    return {
      threads: this.pool.threads.length,
      queued: this.pool.queueSize,
      utilization: Math.round(this.pool.utilization * 1000) / 1000,
      completed: this.pool.completed,
    };
  }

  /** The running threads (to take one down in fault tests). */
  get threads(): readonly import('node:worker_threads').Worker[] {
    return this.pool.threads;
  }

  async onModuleDestroy(): Promise<void> {
    await this.pool.destroy();
  }
}

/** The compiled thread entry, or its TypeScript loader when running from sources. */
function threadFile(): string {
  return __filename.endsWith('.ts')
    ? join(__dirname, 'vector-work.thread-ts.js')
    : join(__dirname, 'vector-work.thread.js');
}
