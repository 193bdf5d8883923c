import { type LsaModel, lsaVersionOf } from './lsa';
import {
  type LearningState,
  modelDue,
  SEMANTIC_PATIENCE_MS,
  SEMANTIC_SAMPLE,
  stillCurrent,
  vocabularyCovered,
} from './semantic-training';

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

  it('learns again soon after an upgrade whose learning is another version, nothing having changed', () => {
    // Learnt at 5 000 documents, 5 000 now, long quiet: no count rule calls for a model.
    const settled = { lastChange: now - 3_600_000, lastAttempt: now - 3_600_000 };
    expect(modelDue(state({ ...settled, modelId: '0123456789abcdef' }))).toBe(false);
    expect(modelDue(state({ ...settled, modelId: 'v2-0123456789abcdef' }))).toBe(true);
    // Still no more often than any learning is tried.
    expect(modelDue(state({ modelId: 'v2-0123456789abcdef', lastAttempt: now - 1000 }))).toBe(
      false,
    );
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

  it('under 5 000 documents, learns again after a hundredth more once quiet', () => {
    const quiet = now - 20_000;
    const small = { learntAt: 400, lastChange: quiet };
    expect(modelDue(state({ ...small, documents: 404 }))).toBe(true);
    expect(modelDue(state({ ...small, documents: 396 }))).toBe(true);
    expect(modelDue(state({ ...small, documents: 403 }))).toBe(false);
    expect(modelDue(state({ ...small, documents: 404, lastChange: now - 1000 }))).toBe(false);
    // The first model, learnt at 50: a document more is a change once quiet.
    expect(modelDue(state({ learntAt: 50, documents: 51, lastChange: quiet }))).toBe(true);
    expect(modelDue(state({ learntAt: 50, documents: 50, lastChange: quiet }))).toBe(false);
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

describe('whether a model learnt again replaces the one searched', () => {
  /** A model of `documents` documents whose terms are each in `df` of them. */
  const model = (documents: number, df: Record<string, number>, dimensions = 64): LsaModel => {
    const terms = Object.keys(df);
    return {
      id: terms.join(','),
      dimensions,
      documents,
      terms,
      vectors: new Float32Array(terms.length * dimensions),
      idf: Float32Array.from(terms, (term) => Math.log(1 + documents / df[term])),
    };
  };
  const full = SEMANTIC_SAMPLE;
  /** Its rarest term is in 2 documents: terms in fewer than 10 of a new sample do not count. */
  const searched = model(full, { log: 2000, level: 1500, pino: 800, child: 60, redact: 2 });
  const weight = (df: number) => df * Math.log(1 + full / df);

  it('weighs each term of the new vocabulary by the documents that hold it', () => {
    expect(vocabularyCovered(searched, model(full, { log: 2100, level: 1400 }))).toBeCloseTo(1, 6);
    // A term in 400 of 5 000 documents, unknown: its df × idf share.
    const learnt = model(full, { log: 2000, level: 1500, invoice: 400 });
    expect(vocabularyCovered(searched, learnt)).toBeCloseTo(
      (weight(2000) + weight(1500)) / (weight(2000) + weight(1500) + weight(400)),
      3,
    );
  });

  it('leaves out terms too rare in the new sample to be sure of, by its edge or ten documents', () => {
    // In 9 documents: chance whether a sample keeps it; in 10, it counts.
    expect(vocabularyCovered(searched, model(full, { log: 2000, invoice: 9 }))).toBeCloseTo(1, 6);
    expect(vocabularyCovered(searched, model(full, { log: 2000, invoice: 10 }))).toBeLessThan(1);
    // A model searched whose rarest term is in 40 documents: from 80 on, a term counts.
    const narrow = model(full, { log: 2000, level: 1500, child: 40 });
    expect(vocabularyCovered(narrow, model(full, { log: 2000, invoice: 79 }))).toBeCloseTo(1, 6);
    expect(vocabularyCovered(narrow, model(full, { log: 2000, invoice: 80 }))).toBeLessThan(1);
  });

  it('says nothing agrees when no term of the new sample is sure enough to count', () => {
    // The rarest term of the one searched in 1 000 documents: nothing under 2 000 counts.
    const narrow = model(full, { log: 2000, level: 1500, child: 1000 });
    expect(vocabularyCovered(narrow, model(full, { log: 2000, level: 1500 }))).toBe(1);
    expect(vocabularyCovered(narrow, model(full, { level: 1500, child: 1999 }))).toBe(0);
    expect(stillCurrent(narrow, model(full, { level: 1500, child: 1999 }))).toBe(false);
  });

  it('keeps the model searched when the new one says nothing it does not know', () => {
    expect(stillCurrent(searched, model(full, { log: 1900, level: 1600, pino: 700 }))).toBe(true);
    // An unknown term that weighs more than 2 % of the new vocabulary.
    const rare = model(full, { log: 2000, level: 1500, pino: 800, invoice: 30 });
    expect(weight(30) / (weight(2000) + weight(1500) + weight(800) + weight(30))).toBeGreaterThan(
      0.02,
    );
    expect(stillCurrent(searched, rare)).toBe(false);
  });

  it('replaces the model searched when a subject it knew has left the knowledge base', () => {
    const before = model(full, { log: 2000, level: 1500, pino: 800, invoice: 700, child: 60 });
    const after = model(full, { log: 2100, level: 1600, pino: 900, child: 70 });
    expect(vocabularyCovered(before, after)).toBeCloseTo(1, 6);
    expect(vocabularyCovered(after, before)).toBeLessThan(0.98);
    expect(stillCurrent(before, after)).toBe(false);
  });

  it('always replaces a model learnt from fewer documents than a full sample', () => {
    const small = model(full - 1, { log: 2000, level: 1500, pino: 800, child: 60 });
    expect(stillCurrent(small, model(full, { log: 2000, level: 1500 }))).toBe(false);
    expect(stillCurrent(searched, model(full - 1, { log: 2000, level: 1500 }))).toBe(false);
  });

  it('replaces a model of other dimensions', () => {
    expect(stillCurrent(searched, model(full, { log: 2000 }, 32))).toBe(false);
  });

  it('replaces a model learnt another way, whatever it knows', () => {
    const same = model(full, { log: 1900, level: 1600, pino: 700 });
    expect(stillCurrent(searched, same)).toBe(true);
    expect(stillCurrent(searched, { ...same, id: `v2-${same.id}` })).toBe(false);
    expect(stillCurrent({ ...searched, id: `v2-${searched.id}` }, { ...same, id: `v2-x` })).toBe(
      true,
    );
    expect(lsaVersionOf('0123456789abcdef')).toBe(1);
    expect(lsaVersionOf('v12-0123456789abcdef')).toBe(12);
  });
});
