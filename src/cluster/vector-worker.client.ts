import { DomainError, ErrorCode } from '../common/domain-error';
import { RETRY_AFTER_SECONDS } from '../common/fault';
import {
  type CallFailure,
  VECTOR_ANSWER,
  VECTOR_CALL,
  VECTOR_CALL_CANCEL,
  type VectorAnswer,
  type VectorCall,
  type VectorCallCancel,
} from './messages';

/** How long a web worker waits for the vector worker's answer before giving up on it. */
export const VECTOR_CALL_TIMEOUT_MS = 60_000;

/** Calls waiting for their answer, by id; one listener on the channel serves them all. */
const waiting = new Map<number, (answer: VectorAnswer) => void>();
let nextId = 0;
let listening = false;

/**
 * Asks the vector worker of this cluster to run `method` with `args` (plain JSON) and
 * resolves its value. Rejects with the vector worker's DomainError as it was thrown there;
 * with UNAVAILABLE (retry in a few seconds) when it is restarting, the channel is gone or
 * no answer came within `timeoutMs`; with the signal's reason once `signal` aborts (the
 * vector worker is told to stop).
 */
export function callVectorWorker<T>(
  method: string,
  args: unknown,
  { signal, timeoutMs = VECTOR_CALL_TIMEOUT_MS }: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<T> {
  const send = process.send?.bind(process);
  if (send === undefined) return Promise.reject(new Error('not a cluster worker'));
  signal?.throwIfAborted();
  if (!listening) {
    listening = true;
    process.on('message', (message: unknown) => {
      const answer = message as VectorAnswer | null;
      if (answer?.type === VECTOR_ANSWER) waiting.get(answer.id)?.(answer);
    });
  }
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    const done = () => {
      waiting.delete(id);
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      send({ type: VECTOR_CALL_CANCEL, id } satisfies VectorCallCancel);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      done();
      send({ type: VECTOR_CALL_CANCEL, id } satisfies VectorCallCancel);
      reject(
        unavailable(
          `the search process of this server did not answer within ${timeoutMs / 1000} s`,
        ),
      );
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    waiting.set(id, (answer) => {
      done();
      if (answer.failure === undefined) resolve(answer.value as T);
      else reject(errorOf(answer.failure));
    });
    send({ type: VECTOR_CALL, id, method, args } satisfies VectorCall, (error: Error | null) => {
      if (error === null || !waiting.has(id)) return;
      done();
      reject(unavailable('the search process of this server cannot be reached'));
    });
  });
}

/** A failure of the vector worker (or of the way to it) as a client should see it. */
export function unavailable(what: string): DomainError {
  return new DomainError(
    ErrorCode.UNAVAILABLE,
    `${what}; retry in ${RETRY_AFTER_SECONDS} seconds`,
    {
      retry_after_seconds: RETRY_AFTER_SECONDS,
    },
  );
}

/** The error a {@link CallFailure} stands for: its DomainError, else a plain error. */
function errorOf(failure: CallFailure): Error {
  const codes: readonly string[] = Object.values(ErrorCode);
  if (failure.code !== undefined && codes.includes(failure.code)) {
    return new DomainError(failure.code as ErrorCode, failure.message, failure.details);
  }
  return new Error(failure.message);
}

/** `error` as it crosses the channel: a DomainError keeps its code and details. */
export function failureOf(error: unknown): CallFailure {
  if (error instanceof DomainError) {
    return { code: error.code, message: error.message, details: error.details };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}
