/** A document found by one side, with the passage that side liked best. */
export interface Candidate {
  readonly documentId: string;
  readonly title: string;
  readonly score: number;
  readonly heading: string;
  readonly content: string;
  /** Found by the lexical side while its current revision waits to be embedded. */
  readonly catchingUp?: boolean;
}

/**
 * Weighted reciprocal rank fusion: a document's score is the sum over the sides that found
 * it of weight / (k + rank), rank counted from 1, the lexical side's weight 1 and the vector
 * side's `vectorWeight`. Ties keep the lexical side's order. The passage is the lexical
 * side's when it has one (it holds the query's words).
 */
export function fuse(
  lexical: readonly Candidate[],
  vector: readonly Candidate[],
  k: number,
  vectorWeight = 1,
): Candidate[] {
  // Lexical hits go in first, then those only the vector side found, each in rank order:
  // the stable sort keeps that order among equal scores.
  const fused = new Map<string, { candidate: Candidate; score: number }>();
  const add = (list: readonly Candidate[], weight: number) =>
    list.forEach((candidate, rank) => {
      const gain = weight / (k + rank + 1);
      const seen = fused.get(candidate.documentId);
      if (seen) seen.score += gain;
      else fused.set(candidate.documentId, { candidate, score: gain });
    });
  add(lexical, 1);
  add(vector, vectorWeight);
  return [...fused.values()]
    .sort((a, b) => b.score - a.score)
    .map(({ candidate, score }) => ({ ...candidate, score }));
}
