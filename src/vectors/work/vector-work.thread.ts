import { move, transferableSymbol, valueSymbol } from 'piscina';
import { workerData } from 'node:worker_threads';
import { warmTokenizer } from '../embedders/tokenizer';
import { runWork, type WorkTask } from './vector-work';

// The cl100k ranks load once per chunking thread, when it starts, not on its first
// document; a thread that only trains the semantic model never needs them (some 100 MB).
if ((workerData as { chunks?: boolean } | undefined)?.chunks) warmTokenizer();

/**
 * The worker-thread entry of the vector work pool: runs one task and hands the vectors
 * back by transfer (their buffer moves to the main thread, nothing is copied).
 */
export default function work(task: WorkTask): unknown {
  const result = runWork(task);
  const vectors = result instanceof Float32Array ? result : result.vectors;
  if (vectors === undefined) return result;
  return move({
    get [transferableSymbol]() {
      return [vectors.buffer];
    },
    get [valueSymbol]() {
      return result;
    },
  });
}
