import {
  LSA_VERSION,
  type LsaModel,
  type LsaTrainer,
  lsaVersionOf,
  type TrainingDocument,
} from './lsa';

/** The latent-semantic model is learnt once the knowledge base holds this many documents... */
export const SEMANTIC_MIN_DOCUMENTS = 50;
/** ...from at most this many of them (a sample fixed by their ids' hashes)... */
export const SEMANTIC_SAMPLE = 5000;
/** ...in this many dimensions, over its most frequent terms... */
export const SEMANTIC_DIMENSIONS = 64;
const SEMANTIC_TERMS = 20_000;
/**
 * ...and learnt again once the records have been quiet for SEMANTIC_QUIET_MS (no document
 * indexed, removed or changed) after their number changed by a tenth (a hundredth in a small
 * knowledge base: SEMANTIC_CHANGE_SHARE_WHOLE), or when it has doubled
 * or halved and the model has waited SEMANTIC_PATIENCE_MS for such a pause, at most every
 * SEMANTIC_RETRAIN_MS. A model learnt while a bulk load is still being indexed is outdated
 * within seconds, and each one makes every document's vector be computed and written again
 * (in Qdrant, every document's point, beside the pipeline's own writes): learning takes a
 * worker thread some seconds, the rewrite far longer. A knowledge base written to without a pause
 * still gets a new model when it has doubled, that much later at most.
 */
const SEMANTIC_RETRAIN_MS = 30_000;
/**
 * A tenth is the change that makes a model due; a hundredth while the model searched learnt
 * from every document (under SEMANTIC_SAMPLE of them). There learning again takes a moment and
 * rewrites few vectors, and the documents a model never saw are a larger part of the whole: a
 * bulk load with a pause in it (a source's waves, an import from several folders) otherwise
 * kept a model learnt before its last tenth until the next tenth came, whose new terms had no
 * vector on the vector side.
 */
const SEMANTIC_CHANGE_SHARE = 10;
const SEMANTIC_CHANGE_SHARE_WHOLE = 100;
const SEMANTIC_QUIET_MS = 15_000;
export const SEMANTIC_PATIENCE_MS = 10 * 60_000;
/** How often a server asks itself whether a model is due. */
export const SEMANTIC_CHECK_MS = 5_000;

/**
 * A model learnt again from a full sample replaces the one searched only when either misses more
 * than this share of what the other learnt (see {@link stillCurrent}): between what two samples
 * of the same documents differ by (up to 1.0 %) and what a subject of one document in five
 * coming or going moves (2.8–3.2 %), measured in docs/search.md.
 */
const SEMANTIC_COVERAGE = 0.98;
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
  /** The id of the model searched (lsa.ts, `lsaVersionOf`): one learnt by another version is due. */
  readonly modelId?: string;
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
  const otherVersion = state.modelId !== undefined && lsaVersionOf(state.modelId) !== LSA_VERSION;
  if (state.learntAt !== undefined && !otherVersion) {
    const { documents, learntAt } = state;
    const doubled = documents >= learntAt * 2 || documents <= learntAt / 2;
    const quiet = state.now - state.lastChange >= SEMANTIC_QUIET_MS;
    const share = learntAt < SEMANTIC_SAMPLE ? SEMANTIC_CHANGE_SHARE_WHOLE : SEMANTIC_CHANGE_SHARE;
    const changed = Math.abs(documents - learntAt) >= Math.max(1, learntAt / share);
    const waited = state.now - Math.max(state.lastAttempt, state.startedAt) >= SEMANTIC_PATIENCE_MS;
    if (!(changed && quiet) && !(doubled && waited)) return false;
  }
  return state.now - state.lastAttempt >= SEMANTIC_RETRAIN_MS;
}

/**
 * The share of `learnt`'s vocabulary that `known` knows, each term weighed as `learnt`'s
 * sample weighs it: its inverse document frequency over the documents that hold it (df × idf,
 * df read back from idf = ln(1 + n / df)). Only the terms `learnt`'s sample holds in enough
 * documents to be sure of count: SEMANTIC_RELIABLE_DF, or twice the document frequency of the
 * rarest term `known` kept (its vocabulary's edge, where samples of the same documents differ by
 * chance). 1 when `learnt` says nothing `known` does not; a new subject in the knowledge base
 * brings terms a model searched has never met (and would give no vector to). 0 when no term of
 * `learnt` is sure enough to count: nothing then says the two agree.
 */
export function vocabularyCovered(known: LsaModel, learnt: LsaModel): number {
  const terms = new Set(known.terms);
  let edge = Infinity;
  known.idf.forEach((idf) => (edge = Math.min(edge, documentFrequency(known, idf))));
  const reliable = Math.max(SEMANTIC_RELIABLE_DF, 2 * edge);
  let all = 0;
  let covered = 0;
  learnt.terms.forEach((term, i) => {
    const idf = learnt.idf[i];
    const df = documentFrequency(learnt, idf);
    if (df < reliable) return;
    all += df * idf;
    if (terms.has(term)) covered += df * idf;
  });
  return all === 0 ? 0 : covered / all;
}

/**
 * How many of a model's sample hold a term of inverse document frequency `idf` (a whole
 * number: the idf is kept in 32 bits, which moves the quotient by some 1e-5).
 */
function documentFrequency(model: LsaModel, idf: number): number {
  return Math.round(model.documents / Math.expm1(idf));
}

/**
 * Whether the model searched is still as good a model of the knowledge base as `learnt`, just
 * learnt again by the count rules above, so that nothing need be written again: both were
 * learnt from a full sample (past SEMANTIC_SAMPLE documents a model learns from as many
 * documents however large the knowledge base, and a new one differs only by which documents
 * it drew), the one searched knows at least SEMANTIC_COVERAGE of what the new one learnt (the
 * documents written since speak of nothing new) and the new one of what the one searched
 * learnt (no subject has left). Under SEMANTIC_SAMPLE documents a new model learns from more
 * documents than the one searched and always replaces it. What this does not see: a subject
 * the model knows growing or shrinking in share with no term coming or going (the model stays
 * until the vocabulary moves). A model learnt another way (lsa.ts, `LSA_VERSION`) is always
 * replaced. Measured in docs/search.md (bench/retrieval/drift-lab.mjs).
 */
export function stillCurrent(searched: LsaModel, learnt: LsaModel): boolean {
  if (searched.id === learnt.id) return true; // the same model learnt again
  return (
    lsaVersionOf(searched.id) === lsaVersionOf(learnt.id) &&
    searched.dimensions === learnt.dimensions &&
    searched.documents >= SEMANTIC_SAMPLE &&
    learnt.documents >= SEMANTIC_SAMPLE &&
    vocabularyCovered(searched, learnt) >= SEMANTIC_COVERAGE &&
    vocabularyCovered(learnt, searched) >= SEMANTIC_COVERAGE
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
