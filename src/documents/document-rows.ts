import { fieldsOf } from '../common/schema-fields';
import {
  deleteResultSchema,
  documentSchema,
  documentSummarySchema,
  historyEntrySchema,
  revisionSchema,
} from './document.schemas';

// A row as the API shows it, by the fields of its shape (document.schemas.ts): times as
// ISO 8601 text, the columns the shape does not name (the indexing error) left out.

export const documentFromRow = fieldsOf(documentSchema);
export const summaryFromRow = fieldsOf(documentSummarySchema);
export const historyEntryFromRow = fieldsOf(historyEntrySchema);

/** An earlier version whole, from its snapshot row and id. */
export const revisionFromRow = fieldsOf(revisionSchema);

/** What a REST delete answers about the document it deleted. */
export const deleteResultOf = fieldsOf(deleteResultSchema);
