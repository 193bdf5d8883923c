import type { Document, DocumentSummary } from './document.schemas';
import type { DocumentRow, DocumentSummaryRow } from './documents.repository';

// A row as the API shows it: times as ISO 8601 text, the indexing error left out.

export function summaryFromRow(row: DocumentSummaryRow): DocumentSummary {
  return {
    document_id: row.document_id,
    parent_id: row.parent_id,
    title: row.title,
    tags: row.tags,
    revision: row.revision,
    updated_at: row.updated_at.toISOString(),
  };
}

export function documentFromRow(row: DocumentRow): Document {
  return {
    document_id: row.document_id,
    parent_id: row.parent_id,
    title: row.title,
    tags: row.tags,
    body: row.body,
    metadata: row.metadata,
    revision: row.revision,
    content_hash: row.content_hash,
    vector_status: row.vector_status,
    vector_revision: row.vector_revision,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    deleted_at: row.deleted_at?.toISOString() ?? null,
  };
}
