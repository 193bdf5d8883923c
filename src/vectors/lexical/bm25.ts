import { anchorCount, bodyCount, headingsCount, passageCount, titleCount } from './posting-store';

/*
 * The constants are the module's own, exported under their names below: the compiled module
 * reads an exported constant from its exports object at every use, and termShare runs once
 * for every posting a search visits (read as locals, a search of 30 000 documents took a
 * third less time or more: bench/profiles/lexical-search.mjs).
 */
const K1 = 1.2;
const B = 0.75;
/** Field weights of BM25F: title, headings, body. */
const WEIGHTS = [2, 2, 1] as const;
const [WT, WH, WB] = WEIGHTS;
/**
 * Weight of the fourth field, the texts of the links pointing at the document (its anchor
 * field, capped at 3 mentions a term): chosen on half of the linked corpus's queries
 * (docs/search.md, "Anchor text").
 */
const WA = 24;
/** Weight of the best passage's share (λ). */
const LAMBDA = 0.5;
export {
  K1 as BM25_K1,
  B as BM25_B,
  WEIGHTS as FIELD_WEIGHTS,
  WA as ANCHOR_WEIGHT,
  LAMBDA as PASSAGE_WEIGHT,
};
/** Fields a document's lengths hold, in order: title, headings, body, anchor. */
export const FIELDS = 4;

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
  let x =
    (WT * titleCount(packed)) / (1 - B + (B * lengths[at]) / averages.title) +
    (WH * headingsCount(packed)) / (1 - B + (B * lengths[at + 1]) / averages.headings) +
    (WB * bodyCount(packed)) / (1 - B + (B * lengths[at + 2]) / averages.body);
  const anchor = anchorCount(packed);
  if (anchor !== 0) x += (WA * anchor) / (1 - B + (B * lengths[at + 3]) / averages.anchor);
  const inPassage = passageShare(passageCount(packed), passageLength, averages.passage);
  return (x * (K1 + 1)) / (K1 + x) + LAMBDA * inPassage;
}

/** BM25 of a term said `count` times in a passage of `length` words. */
export function passageShare(count: number, length: number, average: number): number {
  return (count * (K1 + 1)) / (count + K1 * (1 - B + (B * length) / average));
}

/** BM25's inverse document frequency, as Qdrant's `idf` modifier computes it too. */
export function idf(documents: number, frequency: number): number {
  return Math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5));
}
