/** A document found by one side, with the passage that side liked best. */
export interface Candidate {
  readonly documentId: string;
  readonly title: string;
  readonly score: number;
  readonly heading: string;
  readonly content: string;
  /** Found by the lexical side while its current revision waits to be embedded. */
  readonly catchingUp?: boolean;
  /**
   * The index of the passage found, when a side knows it before its title and text are read
   * (search-sides.ts, `complete`).
   */
  readonly chunk?: number;
}

/**
 * Normalised-score fusion (docs/search.md, "Fusion"): each side's scores are scaled to [0, 1]
 * over its own candidates (min–max: its best is 1, its last 0; see {@link normaliser} for a
 * side that ran out of candidates), and a document's score is
 * `(1 − vectorWeight) · lexical + vectorWeight · vector`, a side that did not find it adding 0.
 * Unlike reciprocal-rank fusion it keeps how sure each side is: a document far ahead on one
 * side stays ahead, one that both sides rank a little lower can pass it. Ties keep the lexical
 * side's order. The passage is the lexical side's when it has one (it holds the query's words).
 * With `floor`, a document only the vector side found is left out when it scores less than
 * that share of the best; with `lexicalFloor`, one only the lexical side found, likewise.
 * `depth`: the candidates each side was asked for (a side that gave fewer ran out).
 * `vectorFromZero` (default true): whether the vector side's floor drops to 0 when it ran out
 * too, as the lexical side's does; true only where a vector score of 0 means no match (see
 * {@link normaliser}).
 */
export function fuse(
  lexical: readonly Candidate[],
  vector: readonly Candidate[],
  vectorWeight: number,
  options: {
    readonly floor?: number;
    readonly lexicalFloor?: number;
    readonly depth?: number;
    readonly vectorFromZero?: boolean;
  } = {},
): Candidate[] {
  const fused = new Map<string, { candidate: Candidate; score: number; sides: number }>();
  const add = (list: readonly Candidate[], weight: number, side: number, depth?: number) => {
    const scale = normaliser(list, depth);
    for (const candidate of list) {
      const gain = weight * scale(candidate.score);
      const seen = fused.get(candidate.documentId);
      if (seen) {
        seen.score += gain;
        seen.sides |= side;
      } else fused.set(candidate.documentId, { candidate, score: gain, sides: side });
    }
  };
  // Lexical hits go in first, then those only the vector side found, each in rank order:
  // the stable sort keeps that order among equal scores.
  add(lexical, 1 - vectorWeight, LEXICAL, options.depth);
  add(vector, vectorWeight, VECTOR, options.vectorFromZero === false ? undefined : options.depth);
  const ranked = [...fused.values()].sort((a, b) => b.score - a.score);
  // The vector side always has nearest neighbours, related or not, and the lexical side's
  // last candidates may share no more than a common word with the query: a document only one
  // side found that scores less than that side's floor of the best is left out, not shown.
  const best = ranked[0]?.score ?? 0;
  const least = {
    [VECTOR]: (options.floor ?? 0) * best,
    [LEXICAL]: (options.lexicalFloor ?? 0) * best,
  };
  return ranked
    .filter(({ score, sides }) => sides === BOTH || score >= least[sides as 1 | 2])
    .map(({ candidate, score }) => ({ ...candidate, score }));
}

/**
 * How far the difference of the two sides' commitments moves the vector side's weight, in
 * log-odds (docs/search.md, "Fusion", the fourth round): chosen with {@link COVERAGE_STRENGTH}
 * on half A of the retrieval set over the three embedders measured (the latent-semantic model,
 * bge-small-en-v1.5 in the server, e5-small-v2 behind the OpenAI-compatible path), by the worst
 * "hybrid − best side" of any of them, then their mean nDCG. At 1 e5's folder questions were
 * 0.017 below its lexical side; here every embedder's worst kind on A is within 0.001 of its
 * better side.
 */
export const EVIDENCE_STRENGTH = 3;

/**
 * How far the lexical side's coverage of the query moves the vector side's weight, in
 * log-odds, from a coverage of one half (chosen with {@link EVIDENCE_STRENGTH}).
 */
export const COVERAGE_STRENGTH = 1.5;

/**
 * The vector side's weight for one query: `prior` (the weight the query's kind and the
 * embedder call for) moved by the evidence of this query's two candidate lists, in log-odds,
 * by {@link EVIDENCE_STRENGTH} times the difference of their {@link commitment}s. A side
 * whose first scores stand out from the rest is sure of something; a side whose scores are
 * all alike (a lexical side matching only a common word, a vector side among neighbours of
 * equal distance) has found nothing in particular. With `coverage` (how much of the query the
 * lexical side's first document holds, its terms weighed by their rarity: term-table.ts), it
 * moves again by {@link COVERAGE_STRENGTH} times `0.5 − coverage`: towards the lexical side
 * when its first document holds the query's rare words, towards the vector side when it holds
 * only the query's common ones. A prior of 0 or 1 is kept as it is (a side chosen outright).
 * Scores and the coverage are what both lexical stores give alike.
 */
export function vectorWeightFor(
  prior: number,
  lexical: readonly Candidate[],
  vector: readonly Candidate[],
  depth: number,
  coverage?: number,
): number {
  if (!(prior > 0 && prior < 1)) return prior;
  const lead = commitment(vector, depth) - commitment(lexical, depth);
  const covered = coverage === undefined ? 0 : COVERAGE_STRENGTH * (0.5 - coverage);
  const odds = Math.log(prior / (1 - prior)) + EVIDENCE_STRENGTH * lead + covered;
  return 1 / (1 + Math.exp(-odds));
}

/**
 * How many of each side's first candidates a folder query's commitments read: the first ten,
 * a page, rather than the fusion's depth. A folder holds few documents, and the lexical side
 * lists nearly all of them, its last ones sharing no more than a common word with the query:
 * read that far, its scores fall steeply whatever it found, and the commitments' move leaned
 * to it on questions the vector side answered (docs/search.md, "Fusion", the fifth round).
 */
export const FOLDER_COMMITMENT_DEPTH = 10;

/** How many candidates of each side {@link vectorWeightFor} reads, for a query in `folder` or not. */
export function commitmentDepth(depth: number, folder: string | undefined): number {
  return folder === undefined ? depth : Math.min(depth, FOLDER_COMMITMENT_DEPTH);
}

/**
 * Normalised query commitment (Shtok et al. 2012) of a side's first `depth` scores: their
 * standard deviation over their mean, 0 for a side with no candidates. It reads the same for
 * BM25 and cosine scores, which a raw score would not.
 */
export function commitment(list: readonly Candidate[], depth: number): number {
  const n = Math.min(list.length, depth);
  if (n === 0) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += list[i].score;
  const mean = sum / n;
  if (!(mean > 0)) return 0;
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (list[i].score - mean) ** 2;
  return Math.sqrt(squares / n) / mean;
}

/** Which sides found a document, as bits. */
const LEXICAL = 1;
const VECTOR = 2;
const BOTH = LEXICAL | VECTOR;

/**
 * Min–max scaling over a list's scores; a list of one score (or equal ones) scales to 1. A
 * list shorter than the `depth` asked ran out: every document it did not give scores 0 on
 * that side, so its floor is 0, not its last candidate's score (in a small folder the lexical
 * side's third and last match is still a match, not the worst of the folder). That holds for
 * a score whose 0 means no match: BM25, and the cosines of the latent-semantic model and the
 * hashed vectors (a document sharing no term, nor a term's company, with the query). An
 * embedding model's cosines have no such 0 (bge-small-en-v1.5 puts a folder's least related
 * document at 0.5–0.7): a floor of 0 squeezed its ranking of a small folder into the top fifth
 * of its range, so its vector side is scaled over what it ranked, given without `depth`.
 */
function normaliser(list: readonly Candidate[], depth?: number): (score: number) => number {
  if (list.length === 0) return () => 0;
  let min = Infinity;
  let max = -Infinity;
  for (const { score } of list) {
    min = Math.min(min, score);
    max = Math.max(max, score);
  }
  if (depth !== undefined && list.length < depth) min = Math.min(min, 0);
  const range = max - min;
  return range > 0 ? (score) => (score - min) / range : () => 1;
}
