import { fieldsOf } from '../common/schema-fields';
import {
  deleteResultSchema,
  documentSchema,
  documentSummarySchema,
  historyEntrySchema,
} from './document.schemas';

// A row as the API shows it, by the fields of its shape (document.schemas.ts): times as
// ISO 8601 text, the columns the shape does not name (the indexing error) left out.

export const documentFromRow = fieldsOf(documentSchema);
export const summaryFromRow = fieldsOf(documentSummarySchema);
export const historyEntryFromRow = fieldsOf(historyEntrySchema);

/** What a REST delete answers about the document it deleted. */
export const deleteResultOf = fieldsOf(deleteResultSchema);
