// What the cluster primary and its workers say to each other over the IPC channel
// (src/primary/primary.ts). Types are namespaced: other libraries may use the same channel.
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

/** The primary's answer to a worker's question. */
export const PRIMARY_ANSWER = 'agent-data:answer';

export interface PrimaryAnswer {
  readonly type: typeof PRIMARY_ANSWER;
  readonly id: number;
  readonly value?: unknown;
  readonly error?: string;
}

let nextId = 0;

/** Tells the primary something (a no-op outside cluster mode). */
export function tellPrimary(type: string): void {
  process.send?.({ type, id: nextId++ });
}

/** Either side of the IPC channel: the worker's `process`, or the primary's `Worker`. */
interface Endpoint {
  on(event: 'message', listener: (message: unknown) => void): unknown;
  removeListener(event: 'message', listener: (message: unknown) => void): unknown;
  send?(message: unknown, callback: (error: Error | null) => void): unknown;
}

/**
 * Sends `{ type, id }` over `endpoint` and resolves the message of `replyType` that comes
 * back with the same id, or `undefined` when none does within `timeoutMs` or the message
 * cannot be sent (the other side is gone).
 */
export function request<R extends { readonly id: number }>(
  endpoint: Endpoint,
  type: string,
  replyType: string,
  timeoutMs: number,
): Promise<R | undefined> {
  const id = nextId++;
  return new Promise((resolve) => {
    const done = (reply: R | undefined) => {
      clearTimeout(timer);
      endpoint.removeListener('message', onMessage);
      resolve(reply);
    };
    const onMessage = (message: unknown) => {
      const reply = message as { type?: unknown; id?: unknown } | null;
      if (reply?.type === replyType && reply.id === id) done(message as R);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    endpoint.on('message', onMessage);
    if (endpoint.send === undefined) done(undefined);
    else endpoint.send({ type, id } satisfies WorkerRequest, (error) => error && done(undefined));
  });
}

/**
 * Asks the primary a question of `type` and resolves its answer; rejects when the primary
 * answers an error, or not within `timeoutMs`, or when this process is not a worker.
 */
export async function askPrimary<T>(type: string, timeoutMs: number): Promise<T> {
  if (process.send === undefined) throw new Error('not a cluster worker');
  const answer = await request<PrimaryAnswer>(process, type, PRIMARY_ANSWER, timeoutMs);
  if (answer === undefined) {
    throw new Error(`the cluster primary did not answer within ${timeoutMs} ms`);
  }
  if (answer.error !== undefined) throw new Error(answer.error);
  return answer.value as T;
}

/**
 * A web worker's call to the vector worker (a search, the pipeline's status), through the
 * primary: in cluster mode only the vector worker holds the search index and the embedder.
 */
export const VECTOR_CALL = 'agent-data:vector-call';
/** The caller of a {@link VECTOR_CALL} no longer waits for it (its request was cancelled). */
export const VECTOR_CALL_CANCEL = 'agent-data:vector-call-cancel';
/** The vector worker's answer to a {@link VECTOR_CALL}, as the primary forwarded it. */
export const VECTOR_ANSWER = 'agent-data:vector-answer';

export interface VectorCall {
  readonly type: typeof VECTOR_CALL;
  readonly id: number;
  readonly method: string;
  readonly args: unknown;
}

export interface VectorCallCancel {
  readonly type: typeof VECTOR_CALL_CANCEL;
  readonly id: number;
}

/** A failure as it crosses the channel: a DomainError's code, message and details. */
export interface CallFailure {
  readonly code?: string;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface VectorAnswer {
  readonly type: typeof VECTOR_ANSWER;
  readonly id: number;
  readonly value?: unknown;
  readonly failure?: CallFailure;
}
