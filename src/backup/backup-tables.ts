/**
 * What a backup keeps, table by table, and what it leaves out because the server derives it
 * again (docs/operations.md, "Backup and restore"). test/backup.e2e-spec.ts fails when a table
 * or a column of the schema is in neither list: a migration that adds one decides here.
 */

/** A table a backup copies whole, in this order, each row ordered by `order` (its key). */
export interface KeptTable {
  readonly name: string;
  readonly columns: readonly string[];
  readonly order: string;
  /** Its `bigserial` column, whose sequence a restore moves past the restored ids. */
  readonly serial?: string;
}

/** The source of truth: what no server can compute again. */
export const KEPT_TABLES: readonly KeptTable[] = [
  {
    name: 'kb_documents',
    columns: [
      'document_id',
      'parent_id',
      'title',
      'tags',
      'body',
      'metadata',
      'revision',
      'content_hash',
      'created_at',
      'updated_at',
      'deleted_at',
    ],
    order: 'document_id',
  },
  {
    name: 'kb_document_snapshots',
    columns: [
      'id',
      'document_id',
      'revision',
      'title',
      'tags',
      'body',
      'metadata',
      'content_hash',
      'deleted_at',
      'reason',
      'actor',
      'snapshot_at',
    ],
    order: 'id',
    serial: 'id',
  },
  {
    name: 'kb_audit',
    columns: ['id', 'operation', 'document_id', 'revision', 'actor', 'at'],
    order: 'id',
    serial: 'id',
  },
  {
    name: 'kb_sources',
    columns: [
      'id',
      'kind',
      'mount',
      'declaration',
      'origin',
      'cursor',
      'next_run_at',
      'failures',
      'paused',
      'held_deletions',
      'last_success_at',
      'created_at',
      'updated_at',
    ],
    order: 'id',
  },
  {
    name: 'kb_source_items',
    columns: ['source_id', 'key', 'document_id', 'version', 'uri', 'validators', 'fetched_at'],
    order: 'source_id, key',
  },
  {
    name: 'kb_source_runs',
    columns: [
      'id',
      'source_id',
      'status',
      'trigger',
      'confirm_deletions',
      'queued_at',
      'started_at',
      'finished_at',
      'heartbeat_at',
      'runner',
      'version',
      'counts',
      'failed_items',
      'message',
    ],
    order: 'id',
    serial: 'id',
  },
];

/**
 * Columns of kept tables left out: the pipeline's bookkeeping. A restored document takes their
 * defaults, `pending` and queued now, exactly as `POST /admin/vectors/reindex` leaves it.
 */
export const DERIVED_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  kb_documents: [
    'vector_status',
    'vector_revision',
    'vector_attempts',
    'vector_error',
    'vector_claimed_at',
    'vector_queued_at',
    'vector_next_attempt_at',
    'vector_lease_expires_at',
    'vector_lease_id',
  ],
};

/** Tables left out, and why each can be. */
export const DERIVED_TABLES: Readonly<Record<string, string>> = {
  kb_passages: 'cut from each document by the pipeline',
  kb_chunk_vectors: 'embedded from the passages by the pipeline',
  kb_chunk_vector_changes: 'the change log of kb_chunk_vectors',
  kb_chunk_vector_meta: 'describes the vectors this server stores',
  kb_lexical_documents: 'analysed from each document by the pipeline',
  kb_lexical_changes: 'the change log of kb_lexical_documents',
  kb_lexical_meta: 'the state of that change log',
  kb_semantic_model: 'learnt again from the lexical index',
  kb_lexical_stats: 'counted by trigger as the lexical records are written',
  kb_qdrant_semantic: 'learnt again from the lexical index',
  kb_folder_counts: 'counted again from the documents at restore',
  kb_folder_count_deltas: 'pending changes of the folder counts',
  kb_links: 'read again from each document’s body after a restore',
  kb_links_pending: 'the documents whose links are still to be read',
  kb_anchors_due: 'anchor fields still to be read, queued again as the pipeline indexes a restore',
  kb_rate_limits: 'transient budgets of the rate limits',
  kb_lexical_snapshot: 'the lexical index as a server held it, saved to start faster',
  kb_lexical_snapshot_parts: 'the parts of that saved lexical index',
  kb_idempotency_keys:
    'answers kept a day for retries of requests to this database; a retry after a restore is a new request',
  typeorm_migrations: 'written by the migrations themselves; the backup names its last one',
};

export const KEPT_BY_NAME: ReadonlyMap<string, KeptTable> = new Map(
  KEPT_TABLES.map((table) => [table.name, table]),
);
