import { type Bm25Averages, termShare } from '../../lexical/bm25';
import type { LexicalRecord } from '../../lexical/lexical-record';
import { packPosting, passageIndex } from '../../lexical/posting-store';
import { termId } from './term-ids';

/** A sparse vector as Qdrant takes it: indices unique, values beside them. */
export interface SparseVector {
  readonly indices: number[];
  readonly values: number[];
}

/**
 * The lexical side of a document in Qdrant: for each of its terms, its BM25 share before the
 * idf (bm25.ts: BM25F over title, headings, body and anchor field plus λ times its best
 * passage's share),
 * under the term's id (term-ids.ts). Qdrant's `idf` modifier multiplies each by the term's
 * idf over the collection at query time, so a query vector of the terms' weights scores
 * exactly the in-memory index's formula — with the mean lengths of `averages`, those of the
 * knowledge base when the document was indexed (the in-memory index uses today's).
 */
export function lexicalVector(record: LexicalRecord, averages: Bm25Averages): SparseVector {
  const byId = new Map<number, number>();
  record.terms.forEach((term, i) => {
    const packed = packPosting(record.fields[i], record.passages[i]);
    const passageLength = record.passageLengths[passageIndex(packed)] ?? 0;
    const share = termShare(packed, record.lengths, 0, passageLength, averages);
    if (!(share > 0)) return;
    const id = termId(term);
    // Two terms of one document under one id (a hash collision) count as one term.
    byId.set(id, (byId.get(id) ?? 0) + share);
  });
  return sparse(byId);
}

/** A query's terms and their weights (1, less for an expansion) as a sparse vector. */
export function queryVector(
  terms: ReadonlyArray<{ readonly term: string; readonly weight: number }>,
): SparseVector {
  const byId = new Map<number, number>();
  for (const { term, weight } of terms) {
    const id = termId(term);
    byId.set(id, Math.max(byId.get(id) ?? 0, weight));
  }
  return sparse(byId);
}

function sparse(byId: ReadonlyMap<number, number>): SparseVector {
  const indices = [...byId.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((id) => byId.get(id)!) };
}
