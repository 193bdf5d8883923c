import { Worker } from 'node:worker_threads';

/** One scan: the vectors (shared memory), which slots to look at, the query, how many wanted. */
export interface ScanRequest {
  readonly vectors: Float32Array;
  /** 1 for a slot holding a document the scan may answer. */
  readonly admitted: Uint8Array;
  readonly slots: number;
  readonly dimensions: number;
  readonly query: Float32Array;
  readonly limit: number;
}

/** The best slots, best first, and their scores (cosines), positive ones only. */
export interface ScanResult {
  readonly slots: Int32Array;
  readonly scores: Float32Array;
}

/**
 * The scan itself: every admitted slot's dot product with the query, the best `limit` kept.
 * Written out in plain JavaScript so that the scan thread can run it from source.
 */
export function scan(request: ScanRequest): ScanResult {
  const { vectors, admitted, slots, dimensions: d, query: q, limit } = request;
  const bestSlots: number[] = [];
  const bestScores: number[] = [];
  let floor = 0;
  const cut = () => {
    const order = bestSlots.map((_, i) => i).sort((a, b) => bestScores[b] - bestScores[a]);
    const keptSlots = order.slice(0, limit).map((i) => bestSlots[i]);
    const keptScores = order.slice(0, limit).map((i) => bestScores[i]);
    bestSlots.length = 0;
    bestScores.length = 0;
    bestSlots.push(...keptSlots);
    bestScores.push(...keptScores);
    floor = bestScores.length >= limit ? bestScores[bestScores.length - 1] : 0;
  };
  for (let slot = 0; slot < slots; slot++) {
    if (admitted[slot] === 0) continue;
    // Four sums at a time: the scan is most of a semantic search's time.
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let j = 0;
    for (let at = slot * d; j + 3 < d; j += 4, at += 4) {
      s0 += q[j] * vectors[at];
      s1 += q[j + 1] * vectors[at + 1];
      s2 += q[j + 2] * vectors[at + 2];
      s3 += q[j + 3] * vectors[at + 3];
    }
    for (let at = slot * d + j; j < d; j++, at++) s0 += q[j] * vectors[at];
    const score = s0 + s1 + s2 + s3;
    if (!(score > 0) || score < floor) continue;
    bestSlots.push(slot);
    bestScores.push(score);
    if (bestSlots.length >= limit * 4) cut();
  }
  cut();
  return { slots: Int32Array.from(bestSlots), scores: Float32Array.from(bestScores) };
}

const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const scan = ${scan.toString()};
parentPort.on('message', ({ id, request }) => {
  try {
    parentPort.postMessage({ id, result: scan(request) });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) });
  }
});`;

/**
 * Runs scans on a thread of its own, so that hybrid search ranks its lexical side on the
 * request loop meanwhile (two cores: the two sides at once). The vectors are shared memory,
 * never copied; a document rewritten during a scan may be scored on a half-written vector
 * for that one search. When the thread cannot be used, the scan runs here.
 */
export class SemanticScanner {
  private worker: Worker | undefined;
  private broken = false;
  private next = 0;
  /** Scans the thread answered (the others ran here). */
  threadScans = 0;
  private readonly waiting = new Map<
    number,
    { resolve: (result: ScanResult) => void; reject: (error: Error) => void }
  >();

  async scan(request: ScanRequest): Promise<ScanResult> {
    const worker = this.thread();
    if (!worker || !(request.vectors.buffer instanceof SharedArrayBuffer)) return scan(request);
    const id = this.next++;
    try {
      const result = await new Promise<ScanResult>((resolve, reject) => {
        this.waiting.set(id, { resolve, reject });
        worker.postMessage({ id, request });
      });
      this.threadScans++;
      return result;
    } catch {
      // The thread failed: this scan and the next run here.
      this.broken = true;
      void worker.terminate();
      return scan(request);
    }
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.broken = true;
    await worker?.terminate();
  }

  private thread(): Worker | undefined {
    if (this.broken) return undefined;
    if (!this.worker) {
      const worker = new Worker(THREAD_SOURCE, { eval: true });
      worker.unref();
      worker.on('message', (message: { id: number; result?: ScanResult; error?: string }) => {
        const waiter = this.waiting.get(message.id);
        this.waiting.delete(message.id);
        if (message.result) waiter?.resolve(message.result);
        else waiter?.reject(new Error(`semantic scan failed: ${message.error}`));
      });
      const fail = (error: Error) => {
        this.broken = true;
        this.worker = undefined;
        for (const waiter of this.waiting.values()) waiter.reject(error);
        this.waiting.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => {
        if (this.worker === worker) fail(new Error(`the semantic scan thread stopped (${code})`));
      });
      this.worker = worker;
    }
    return this.worker;
  }
}
