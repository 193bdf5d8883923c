import { type LearningState, modelDue, SEMANTIC_PATIENCE_MS } from './semantic-training';

describe('when a semantic model is due', () => {
  const now = 1_000_000_000_000;
  const minute = 60_000;
  /** A model learnt at 5 000 documents a minute ago, documents indexed a second ago. */
  const state = (change: Partial<LearningState>): LearningState => ({
    documents: 5000,
    learntAt: 5000,
    lastChange: now - 1000,
    lastAttempt: now - minute,
    startedAt: now - minute,
    now,
    ...change,
  });

  it('learns the first model once 50 documents are held, writes or not', () => {
    expect(modelDue(state({ documents: 49, learntAt: undefined, lastAttempt: 0 }))).toBe(false);
    expect(modelDue(state({ documents: 50, learntAt: undefined, lastAttempt: 0 }))).toBe(true);
  });

  it('waits for the records to be quiet while a bulk load doubles them', () => {
    // Still being indexed: the model learnt now would be outdated within seconds.
    expect(modelDue(state({ documents: 10_000 }))).toBe(false);
    expect(modelDue(state({ documents: 2400 }))).toBe(false);
    // 15 s without a change: learnt from all of them.
    expect(modelDue(state({ documents: 10_000, lastChange: now - 15_000 }))).toBe(true);
  });

  it('learns again after a tenth more once quiet, and not for less', () => {
    const quiet = now - 20_000;
    expect(modelDue(state({ documents: 5500, lastChange: quiet }))).toBe(true);
    expect(modelDue(state({ documents: 4500, lastChange: quiet }))).toBe(true);
    expect(modelDue(state({ documents: 5400, lastChange: quiet }))).toBe(false);
  });

  it('does not wait for a pause for ever: doubled, a model waited on long enough is replaced', () => {
    const long = now - SEMANTIC_PATIENCE_MS;
    expect(modelDue(state({ documents: 10_000, startedAt: long, lastAttempt: long }))).toBe(true);
    // A tenth more is not enough without a pause, however long the wait.
    expect(modelDue(state({ documents: 6000, startedAt: long, lastAttempt: long }))).toBe(false);
  });

  it('tries at most every 30 s', () => {
    const quiet = now - 20_000;
    expect(
      modelDue(state({ documents: 10_000, lastChange: quiet, lastAttempt: now - 29_000 })),
    ).toBe(false);
    expect(
      modelDue(state({ documents: 10_000, lastChange: quiet, lastAttempt: now - 30_000 })),
    ).toBe(true);
  });
});
