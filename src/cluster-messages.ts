// What the cluster primary and its workers say to each other over the IPC channel
// (src/cluster.ts). Types are namespaced: other libraries may use the same channel.
import type { MetricObjectWithValues, MetricValue } from 'prom-client';

/** A worker listens: the primary may start the next one. */
export const WORKER_LISTENING = 'agent-data:listening';
/** A worker asks for the whole cluster's metrics (the answer is the exposition text). */
export const METRICS_REQUEST = 'agent-data:metrics';
/** The primary asks a worker for its registry's metrics, as JSON. */
export const REGISTRY_REQUEST = 'agent-data:registry';
/** A worker's answer to {@link REGISTRY_REQUEST}. */
export const WORKER_METRICS = 'agent-data:registry-metrics';

export interface WorkerMetrics {
  readonly type: typeof WORKER_METRICS;
  readonly id: number;
  readonly metrics?: MetricObjectWithValues<MetricValue<string>>[];
}

export interface WorkerRequest {
  readonly type: string;
  readonly id: number;
}

export interface PrimaryAnswer {
  readonly type: 'agent-data:answer';
  readonly id: number;
  readonly value?: unknown;
  readonly error?: string;
}

let nextId = 0;

/** Tells the primary something (a no-op outside cluster mode). */
export function tellPrimary(type: string): void {
  process.send?.({ type, id: nextId++ });
}

/**
 * Asks the primary a question of `type` and resolves its answer; rejects when the primary
 * answers an error, or not within `timeoutMs`, or when this process is not a worker.
 */
export function askPrimary<T>(type: string, timeoutMs: number): Promise<T> {
  const send = process.send?.bind(process);
  if (send === undefined) return Promise.reject(new Error('not a cluster worker'));
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    const onMessage = (message: unknown) => {
      const answer = message as Partial<PrimaryAnswer> | null;
      if (answer?.type !== 'agent-data:answer' || answer.id !== id) return;
      done();
      if (answer.error !== undefined) reject(new Error(answer.error));
      else resolve(answer.value as T);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`the cluster primary did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      process.removeListener('message', onMessage);
    };
    process.on('message', onMessage);
    send({ type, id } satisfies WorkerRequest);
  });
}
