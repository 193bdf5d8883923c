import { totalCount, type IndexedLexicalDocument } from './lexical-index';
import { decodePostings, splitTerms } from './lexical-record';

/** The stored lexical records (`kb_lexical_documents`) as the replica reads them. */
export const SELECT_DOCUMENTS = `SELECT document_id, revision, tags, lengths, passage_lengths, terms, postings
                            FROM kb_lexical_documents`;

export interface LexicalRow {
  document_id: string;
  revision: number;
  tags: string[];
  lengths: number[];
  passage_lengths: number[];
  terms: string;
  postings: Buffer;
}

/** A stored record as the index takes it. */
/** A document's terms and how often it says each (title, headings and body together). */
export function countsOf(document: IndexedLexicalDocument): Map<string, number> {
  const counts = new Map<string, number>();
  document.terms.forEach((term, i) => counts.set(term, totalCount(document.fields[i])));
  return counts;
}

export function documentOf(row: LexicalRow): IndexedLexicalDocument {
  const terms = splitTerms(row.terms);
  const { fields, passages } = decodePostings(row.postings, terms.length);
  return {
    documentId: row.document_id,
    revision: row.revision,
    tags: row.tags,
    terms,
    fields,
    passages,
    lengths: [row.lengths[0], row.lengths[1], row.lengths[2]],
    passageLengths: row.passage_lengths,
  };
}
