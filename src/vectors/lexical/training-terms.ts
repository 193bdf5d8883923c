import type { DecodedTraining, TrainingDocument } from '../semantic/lsa';
import { totalCount } from './lexical-index';
import { decodePostings, splitTerms } from './lexical-record';

/**
 * A lexical record as stored, read for training the semantic model: its terms and each one's
 * count over title, headings and body.
 */
export function trainingTermsOf(document: TrainingDocument): DecodedTraining {
  const terms = splitTerms(document.terms);
  const { fields } = decodePostings(Buffer.from(document.postings), terms.length);
  return { terms, counts: Float64Array.from(fields, totalCount) };
}
