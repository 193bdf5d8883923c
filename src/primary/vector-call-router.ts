import type { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import {
  VECTOR_ANSWER,
  VECTOR_CALL,
  VECTOR_CALL_CANCEL,
  type VectorAnswer,
  type VectorCall,
  type VectorCallCancel,
} from '../cluster/messages';
import { failureOf, unavailable } from '../cluster/vector-worker.client';

/**
 * The primary's part in the web workers' calls to the vector worker (vector-worker.client.ts):
 * each call is forwarded under an id of the primary's own (the web workers count theirs
 * independently), its answer returned to the worker that asked, a cancellation passed on.
 * While no vector worker listens (it died and is restarting) a call is answered UNAVAILABLE
 * at once, and the calls it had not answered when it died are answered so too.
 */
export class VectorCallRouter {
  private vector: Worker | undefined;
  /** Calls the vector worker has not answered: the primary's id → who asked, and their id. */
  private readonly calls = new Map<number, { from: Worker; id: number }>();
  private nextId = 0;

  constructor(private readonly log: Logger) {}

  /** The vector worker listens: calls go to it from now on. */
  vectorListens(worker: Worker): void {
    this.vector = worker;
  }

  /** A web worker's call. */
  call(from: Worker, message: VectorCall): void {
    const vector = this.vector;
    if (vector === undefined || !vector.isConnected()) {
      this.reply(from, message.id, { failure: failureOf(restarting()) });
      return;
    }
    const id = this.nextId++;
    this.calls.set(id, { from, id: message.id });
    const forwarded: VectorCall = {
      type: VECTOR_CALL,
      id,
      method: message.method,
      args: message.args,
    };
    vector.send(forwarded, (error: Error | null) => {
      if (error === null || !this.calls.delete(id)) return;
      this.reply(from, message.id, { failure: failureOf(restarting()) });
    });
  }

  /** A web worker no longer waits for one of its calls. */
  cancel(from: Worker, message: VectorCallCancel): void {
    for (const [id, call] of this.calls) {
      if (call.from !== from || call.id !== message.id) continue;
      this.calls.delete(id);
      this.tellVector({ type: VECTOR_CALL_CANCEL, id });
      return;
    }
  }

  /** The vector worker's answer. */
  answer(message: VectorAnswer): void {
    const call = this.calls.get(message.id);
    if (call === undefined) return;
    this.calls.delete(message.id);
    this.reply(call.from, call.id, { value: message.value, failure: message.failure });
  }

  /** A worker exited: the calls it made are cancelled, or, the vector worker, answered. */
  exited(worker: Worker): void {
    if (worker === this.vector) {
      this.vector = undefined;
      for (const call of this.calls.values()) {
        this.reply(call.from, call.id, { failure: failureOf(restarting()) });
      }
      this.calls.clear();
      return;
    }
    for (const [id, call] of this.calls) {
      if (call.from !== worker) continue;
      this.calls.delete(id);
      this.tellVector({ type: VECTOR_CALL_CANCEL, id });
    }
  }

  private tellVector(message: VectorCallCancel): void {
    if (!this.vector?.isConnected()) return;
    this.vector.send(message, (error: Error | null) => {
      if (error) this.log.warn(`telling the vector worker: ${error.message}`);
    });
  }

  private reply(to: Worker, id: number, fields: Pick<VectorAnswer, 'value' | 'failure'>): void {
    if (!to.isConnected()) return;
    to.send(
      { type: VECTOR_ANSWER, id, ...fields } satisfies VectorAnswer,
      (error: Error | null) => {
        if (error) this.log.warn(`answering worker ${to.process.pid}: ${error.message}`);
      },
    );
  }
}

function restarting() {
  return unavailable('the search process of this server is restarting');
}
