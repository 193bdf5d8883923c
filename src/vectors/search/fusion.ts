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
 * Normalised-score fusion (docs/search.md): each side's scores are scaled to [0, 1] over
 * its own candidates (min–max: its best is 1, its last 0), and a document's score is
 * `(1 − vectorWeight) · lexical + vectorWeight · vector`, a side that did not find it
 * adding 0. Unlike reciprocal-rank fusion it keeps how sure each side is: a document far
 * ahead on one side stays ahead, one that both sides rank a little lower can pass it. Ties
 * keep the lexical side's order. The passage is the lexical side's when it has one (it holds
 * the query's words). With `floor`, a document only the vector side found is left out when it
 * scores less than that share of the best; with `lexicalFloor`, one only the lexical side
 * found, likewise.
 */
export function fuse(
  lexical: readonly Candidate[],
  vector: readonly Candidate[],
  vectorWeight: number,
  options: { readonly floor?: number; readonly lexicalFloor?: number } = {},
): Candidate[] {
  const fused = new Map<string, { candidate: Candidate; score: number; sides: number }>();
  const add = (list: readonly Candidate[], weight: number, side: number) => {
    const scale = normaliser(list);
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
  add(lexical, 1 - vectorWeight, LEXICAL);
  add(vector, vectorWeight, VECTOR);
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

/** Which sides found a document, as bits. */
const LEXICAL = 1;
const VECTOR = 2;
const BOTH = LEXICAL | VECTOR;

/** Min–max scaling over a list's scores; a list of one score (or equal ones) scales to 1. */
function normaliser(list: readonly Candidate[]): (score: number) => number {
  if (list.length === 0) return () => 0;
  let min = Infinity;
  let max = -Infinity;
  for (const { score } of list) {
    min = Math.min(min, score);
    max = Math.max(max, score);
  }
  const range = max - min;
  return range > 0 ? (score) => (score - min) / range : () => 1;
}
