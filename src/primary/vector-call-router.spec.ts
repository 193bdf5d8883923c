import type { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import {
  VECTOR_ANSWER,
  VECTOR_CALL,
  VECTOR_CALL_CANCEL,
  type VectorAnswer,
  type VectorCall,
} from '../cluster/messages';
import { VectorCallRouter } from './vector-call-router';

/** A worker as the router sees it: what it was sent, whether its channel is open. */
function worker(pid: number) {
  const sent: Array<Record<string, unknown>> = [];
  const w = {
    sent,
    connected: true,
    process: { pid },
    isConnected: () => w.connected,
    send: (message: Record<string, unknown>, done: (error: Error | null) => void) => {
      if (!w.connected) return done(new Error('channel closed'));
      sent.push(message);
      done(null);
    },
  };
  return w;
}

const log = { warn: () => undefined } as unknown as Logger;
const call = (id: number, method = 'search'): VectorCall => ({
  type: VECTOR_CALL,
  id,
  method,
  args: { input: { query: 'q' } },
});

describe('VectorCallRouter', () => {
  let router: VectorCallRouter;
  let vector: ReturnType<typeof worker>;
  let webA: ReturnType<typeof worker>;
  let webB: ReturnType<typeof worker>;
  const as = (w: ReturnType<typeof worker>) => w as unknown as Worker;

  beforeEach(() => {
    router = new VectorCallRouter(log);
    vector = worker(1);
    webA = worker(2);
    webB = worker(3);
  });

  it('answers UNAVAILABLE at once while no vector worker listens', () => {
    router.call(as(webA), call(7));
    expect(webA.sent).toEqual([
      {
        type: VECTOR_ANSWER,
        id: 7,
        failure: {
          code: 'UNAVAILABLE',
          message: expect.stringContaining('restarting; retry in 5 seconds'),
          details: { retry_after_seconds: 5 },
        },
      },
    ]);
  });

  it('forwards calls under ids of its own and returns each answer to its caller', () => {
    router.vectorListens(as(vector));
    // Both web workers count from 0: the same id from each is two calls.
    router.call(as(webA), call(0));
    router.call(as(webB), call(0, 'status'));
    expect(vector.sent.map((m) => [m.id, m.method])).toEqual([
      [0, 'search'],
      [1, 'status'],
    ]);
    const answer = (id: number, value: unknown): VectorAnswer => ({
      type: VECTOR_ANSWER,
      id,
      value,
    });
    router.answer(answer(1, 'status of B'));
    router.answer(answer(0, 'results of A'));
    router.answer(answer(0, 'a duplicate')); // answered already: dropped
    expect(webA.sent).toEqual([{ type: VECTOR_ANSWER, id: 0, value: 'results of A' }]);
    expect(webB.sent).toEqual([{ type: VECTOR_ANSWER, id: 0, value: 'status of B' }]);
  });

  it('passes a cancellation on, and drops the answer that may still come', () => {
    router.vectorListens(as(vector));
    router.call(as(webA), call(5));
    router.call(as(webB), call(5));
    router.cancel(as(webB), { type: VECTOR_CALL_CANCEL, id: 5 });
    expect(vector.sent[2]).toEqual({ type: VECTOR_CALL_CANCEL, id: 1 });
    router.answer({ type: VECTOR_ANSWER, id: 1, value: 'late' });
    expect(webB.sent).toEqual([]);
    router.answer({ type: VECTOR_ANSWER, id: 0, value: 'on time' });
    expect(webA.sent).toEqual([{ type: VECTOR_ANSWER, id: 5, value: 'on time' }]);
  });

  it('answers UNAVAILABLE every call the vector worker took with it when it died', () => {
    router.vectorListens(as(vector));
    router.call(as(webA), call(1));
    router.call(as(webB), call(2));
    vector.connected = false;
    router.exited(as(vector));
    for (const [web, id] of [
      [webA, 1],
      [webB, 2],
    ] as const) {
      expect(web.sent).toEqual([
        expect.objectContaining({ id, failure: expect.objectContaining({ code: 'UNAVAILABLE' }) }),
      ]);
    }
    // And the calls made before a new one listens.
    router.call(as(webA), call(3));
    expect(webA.sent[1]).toMatchObject({ id: 3, failure: { code: 'UNAVAILABLE' } });
  });

  it('cancels at the vector worker the calls of a web worker that died', () => {
    router.vectorListens(as(vector));
    router.call(as(webA), call(1));
    router.call(as(webB), call(1));
    router.exited(as(webA));
    expect(vector.sent.slice(2)).toEqual([{ type: VECTOR_CALL_CANCEL, id: 0 }]);
    router.answer({ type: VECTOR_ANSWER, id: 1, value: 'B still gets it' });
    expect(webB.sent).toEqual([{ type: VECTOR_ANSWER, id: 1, value: 'B still gets it' }]);
  });

  it('answers UNAVAILABLE when the call cannot be sent to the vector worker', () => {
    router.vectorListens(as(vector));
    vector.isConnected = () => true;
    vector.connected = false; // the channel closes as the call is sent
    router.call(as(webA), call(4));
    expect(webA.sent).toEqual([
      expect.objectContaining({ id: 4, failure: expect.objectContaining({ code: 'UNAVAILABLE' }) }),
    ]);
  });
});
