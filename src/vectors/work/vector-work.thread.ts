import { move, transferableSymbol, valueSymbol } from 'piscina';
import { warmTokenizer } from '../embedders/tokenizer';
import { runWork, type WorkTask } from './vector-work';

// The cl100k ranks load once per thread, when it starts, not on its first document.
warmTokenizer();

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
