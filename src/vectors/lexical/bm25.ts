import { anchorCount, bodyCount, headingsCount, passageCount, titleCount } from './posting-store';

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** Field weights of BM25F: title, headings, body. */
export const FIELD_WEIGHTS = [2, 2, 1] as const;
/**
 * Weight of the fourth field, the texts of the links pointing at the document (its anchor
 * field, capped at 3 mentions a term): chosen on half of the linked corpus's queries
 * (docs/search.md, "Anchor text").
 */
export const ANCHOR_WEIGHT = 24;
/** Fields a document's lengths hold, in order: title, headings, body, anchor. */
export const FIELDS = 4;
/** Weight of the best passage's share (λ). */
export const PASSAGE_WEIGHT = 0.5;

/** The mean lengths, in words, that BM25 normalises a document's fields and passages by. */
export interface Bm25Averages {
  readonly title: number;
  readonly headings: number;
  readonly body: number;
  /** Over every document, those no link names counting 0. */
  readonly anchor: number;
  readonly passage: number;
}

/**
 * What one term of a document adds to its score before the term's idf (docs/search.md):
 * BM25F's saturated term frequency over the title, headings, body and anchor field, each
 * normalised by its length against the mean, plus λ times the term's BM25 share in the
 * passage that holds it best. `packed` holds the term's counts as the index keeps them
 * (posting-store.ts); `lengths` are the document's title, headings, body and anchor lengths
 * from `at` on.
 * The in-memory index sums idf × this over the query's terms; the Qdrant index stores this as
 * the term's value in the document's sparse vector and Qdrant multiplies by the idf.
 */
export function termShare(
  packed: number,
  lengths: ArrayLike<number>,
  at: number,
  passageLength: number,
  averages: Bm25Averages,
): number {
  const [wt, wh, wb] = FIELD_WEIGHTS;
  const k1 = BM25_K1;
  const b = BM25_B;
  const anchor = anchorCount(packed);
  const x =
    (wt * titleCount(packed)) / (1 - b + (b * lengths[at]) / averages.title) +
    (wh * headingsCount(packed)) / (1 - b + (b * lengths[at + 1]) / averages.headings) +
    (wb * bodyCount(packed)) / (1 - b + (b * lengths[at + 2]) / averages.body) +
    (anchor === 0
      ? 0
      : (ANCHOR_WEIGHT * anchor) / (1 - b + (b * lengths[at + 3]) / averages.anchor));
  const inPassage = passageShare(passageCount(packed), passageLength, averages.passage);
  return (x * (k1 + 1)) / (k1 + x) + PASSAGE_WEIGHT * inPassage;
}

/** BM25 of a term said `count` times in a passage of `length` words. */
export function passageShare(count: number, length: number, average: number): number {
  return (count * (BM25_K1 + 1)) / (count + BM25_K1 * (1 - BM25_B + (BM25_B * length) / average));
}

/** BM25's inverse document frequency, as Qdrant's `idf` modifier computes it too. */
export function idf(documents: number, frequency: number): number {
  return Math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5));
}
