import { totalCount, type IndexedLexicalDocument } from './lexical-index';
import {
  type AnchorField,
  decodePostings,
  type LexicalRecord,
  splitTerms,
  withAnchorField,
} from './lexical-record';

/** The stored lexical records (`kb_lexical_documents`) as the replica reads them. */
export const SELECT_DOCUMENTS = `SELECT document_id, revision, tags, lengths, passage_lengths, terms, postings,
                                   anchor_terms, anchor_counts, anchor_length, anchor_stamp
                            FROM kb_lexical_documents`;

export interface LexicalRow {
  document_id: string;
  revision: number;
  tags: string[];
  lengths: number[];
  passage_lengths: number[];
  terms: string;
  postings: Buffer;
  anchor_terms: string;
  anchor_counts: Buffer;
  anchor_length: number;
  anchor_stamp: number;
}

/**
 * A document's terms and how often it says each (title, headings and body together): what a
 * latent-semantic model reads. Terms only the links to it say (its anchor field) are not its
 * words.
 */
export function countsOf(record: LexicalRecord): Map<string, number> {
  const counts = new Map<string, number>();
  record.terms.forEach((term, i) => {
    const count = totalCount(record.fields[i]);
    if (count > 0) counts.set(term, count);
  });
  return counts;
}

/** A stored record as the index takes it, its anchor field in. */
export function documentOf(row: LexicalRow): IndexedLexicalDocument {
  const terms = splitTerms(row.terms);
  const { fields, passages } = decodePostings(row.postings, terms.length);
  const record = withAnchorField(
    {
      terms,
      fields,
      passages,
      lengths: [row.lengths[0], row.lengths[1], row.lengths[2], 0],
      passageLengths: row.passage_lengths,
    },
    anchorFieldOfRow(row),
  );
  return {
    ...record,
    documentId: row.document_id,
    revision: row.revision,
    tags: row.tags,
    anchorStamp: row.anchor_stamp,
  };
}

/** The anchor field as stored beside a record. */
export function anchorFieldOfRow(
  row: Pick<LexicalRow, 'anchor_terms' | 'anchor_counts' | 'anchor_length'>,
): AnchorField {
  const terms = splitTerms(row.anchor_terms);
  if (row.anchor_counts.length !== terms.length)
    throw new Error(`anchor counts of ${row.anchor_counts.length} bytes for ${terms.length} terms`);
  return { terms, counts: [...row.anchor_counts], length: row.anchor_length };
}
