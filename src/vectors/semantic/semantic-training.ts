import type { LsaModel, LsaTrainer, TrainingDocument } from './lsa';

/** The latent-semantic model is learnt once the knowledge base holds this many documents... */
export const SEMANTIC_MIN_DOCUMENTS = 50;
/** ...from at most this many of them (a sample fixed by their ids' hashes)... */
export const SEMANTIC_SAMPLE = 5000;
/** ...in this many dimensions, over its most frequent terms... */
export const SEMANTIC_DIMENSIONS = 64;
const SEMANTIC_TERMS = 20_000;
/**
 * ...and learnt again once the records have been quiet for SEMANTIC_QUIET_MS (no document
 * indexed, removed or changed) after their number changed by a tenth, or when it has doubled
 * or halved and the model has waited SEMANTIC_PATIENCE_MS for such a pause, at most every
 * SEMANTIC_RETRAIN_MS. A model learnt while a bulk load is still being indexed is outdated
 * within seconds, and each one makes every document's vector be computed and written again
 * (in Qdrant, every document's point, beside the pipeline's own writes): learning takes a
 * worker thread some seconds, the rewrite far longer. A knowledge base written to without a pause
 * still gets a new model when it has doubled, that much later at most.
 */
const SEMANTIC_RETRAIN_MS = 30_000;
const SEMANTIC_QUIET_MS = 15_000;
export const SEMANTIC_PATIENCE_MS = 10 * 60_000;
/** How often a server asks itself whether a model is due. */
export const SEMANTIC_CHECK_MS = 5_000;

/**
 * A model learnt again from a full sample replaces the one searched only when the one searched
 * misses more than this share of what the new one learnt (see {@link stillCurrent}).
 */
const SEMANTIC_COVERAGE = 0.995;
/**
 * Terms held by fewer documents of a sample than this (or than twice the rarest of the model
 * searched) are left out of that share: whether such a term makes a sample's vocabulary is
 * chance (two samples of the same documents differ there by a percent or more).
 */
const SEMANTIC_RELIABLE_DF = 10;

/** What decides whether a model is to be learnt now. */
export interface LearningState {
  /** Documents the lexical index holds now. */
  readonly documents: number;
  /**
   * Documents it held when the model searched now was learnt, or last found still current
   * ({@link stillCurrent}); undefined: no model yet.
   */
  readonly learntAt: number | undefined;
  /** When a document last changed (ms since the epoch). */
  readonly lastChange: number;
  /** When learning was last tried (ms since the epoch, 0 never). */
  readonly lastAttempt: number;
  /**
   * When this process started (ms since the epoch): it has waited with the model it searches
   * since its last attempt, or since then when it has not tried.
   */
  readonly startedAt: number;
  readonly now: number;
}

/** Whether a (new) model is due: see SEMANTIC_RETRAIN_MS. */
export function modelDue(state: LearningState): boolean {
  if (state.documents < SEMANTIC_MIN_DOCUMENTS) return false;
  if (state.learntAt !== undefined) {
    const { documents, learntAt } = state;
    const doubled = documents >= learntAt * 2 || documents <= learntAt / 2;
    const quiet = state.now - state.lastChange >= SEMANTIC_QUIET_MS;
    const changed = Math.abs(documents - learntAt) >= learntAt / 10;
    const waited = state.now - Math.max(state.lastAttempt, state.startedAt) >= SEMANTIC_PATIENCE_MS;
    if (!(changed && quiet) && !(doubled && waited)) return false;
  }
  return state.now - state.lastAttempt >= SEMANTIC_RETRAIN_MS;
}

/**
 * The share of `learnt`'s vocabulary that `searched` knows, each term weighed as `learnt`'s
 * sample weighs it: its inverse document frequency over the documents that hold it (df × idf,
 * df read back from idf = ln(1 + n / df)). Only the terms the new sample holds in enough
 * documents to be sure of count: SEMANTIC_RELIABLE_DF, or twice the document frequency of the
 * rarest term the model searched kept (its vocabulary's edge, where samples of the same
 * documents differ by chance). 1 when the new sample says nothing the model does not know; a
 * new subject in the knowledge base brings terms the model searched has never met (and would
 * give no vector to).
 */
export function vocabularyCovered(searched: LsaModel, learnt: LsaModel): number {
  const known = new Set(searched.terms);
  let edge = Infinity;
  searched.idf.forEach((idf) => (edge = Math.min(edge, documentFrequency(searched, idf))));
  const reliable = Math.max(SEMANTIC_RELIABLE_DF, 2 * edge) - 1e-6;
  let all = 0;
  let covered = 0;
  learnt.terms.forEach((term, i) => {
    const idf = learnt.idf[i];
    const df = documentFrequency(learnt, idf);
    if (df < reliable) return;
    all += df * idf;
    if (known.has(term)) covered += df * idf;
  });
  return all === 0 ? 1 : covered / all;
}

/** How many of a model's sample hold a term of inverse document frequency `idf`. */
function documentFrequency(model: LsaModel, idf: number): number {
  return model.documents / Math.expm1(idf);
}

/**
 * Whether the model searched is still as good a model of the knowledge base as `learnt`, just
 * learnt again by the count rules above, so that nothing need be written again: both were
 * learnt from a full sample (past SEMANTIC_SAMPLE documents a model learns from as many
 * documents however large the knowledge base, and a new one differs only by which documents
 * it drew) and the one searched knows at least SEMANTIC_COVERAGE of what the new one learnt
 * (the documents written since speak of the same things). Under SEMANTIC_SAMPLE documents a
 * new model learns from more documents than the one searched and always replaces it.
 * Measured (docs/search.md, bench/retrieval/drift-lab.mjs): more of the same documents
 * 99.63–100 %; one document in eleven on a subject the model searched had not met 99.26 %,
 * one in five 96.99 %.
 */
export function stillCurrent(searched: LsaModel, learnt: LsaModel): boolean {
  return (
    searched.dimensions === learnt.dimensions &&
    searched.documents >= SEMANTIC_SAMPLE &&
    learnt.documents >= SEMANTIC_SAMPLE &&
    vocabularyCovered(searched, learnt) >= SEMANTIC_COVERAGE
  );
}

/**
 * Learns a model from a sample of the lexical records in PostgreSQL (fixed by the hashes of
 * the documents' ids), on the trainer's thread: the records travel as stored and are decoded
 * there, so that nothing is built for them on the request loop.
 */
export async function learnModel(
  records: { trainingSample(limit: number): Promise<TrainingDocument[]> },
  trainer: LsaTrainer,
): Promise<LsaModel> {
  const documents = await records.trainingSample(SEMANTIC_SAMPLE);
  return trainer.trainLsa(documents, {
    dimensions: SEMANTIC_DIMENSIONS,
    maxTerms: SEMANTIC_TERMS,
  });
}
