import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { VECTOR_STATUSES, type VectorStatus } from '../../documents/document.schemas';

/** A document in `error`, as the status endpoint lists it. */
export interface VectorErrorRow {
  document_id: string;
  error: string | null;
  attempts: number;
  next_attempt_at: Date | null;
}

/** Pending work at a glance: what the lag gauges and the status endpoint show. */
export interface PendingVectorWork {
  pending: number;
  /** Age of the oldest pending document, in seconds (0 when none). */
  lagSeconds: number;
  errors: number;
}

/**
 * What the vector sync queue holds, for people and monitoring: counts per status, the lag,
 * documents in `error`, lexical coverage. Read-only, and apart from the queue's statements
 * (vector-queue.repository.ts): these change with what the status endpoint and the gauges
 * show, those with how the workers move documents.
 */
@Injectable()
export class VectorQueueStatus {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Of the documents lexical search should find (alive, with a body, not under one of
   * `skipped`), how many have a lexical record of their revision under `analyzer`.
   */
  async lexicalCoverage(
    analyzer: number,
    skipped: readonly string[],
  ): Promise<{ indexed: number; indexable: number }> {
    const [text, values] = this.lexicalCoverageQueryForExplain(analyzer, skipped);
    const [row]: Array<{ indexed: number; indexable: number }> = await this.dataSource.query(
      text,
      values,
    );
    return row;
  }

  /** The exact query and parameters {@link lexicalCoverage} runs, for EXPLAIN in tests. */
  lexicalCoverageQueryForExplain(
    analyzer: number,
    skipped: readonly string[],
  ): [string, unknown[]] {
    // A join rather than EXISTS inside the count's FILTER: that is a probe of the records'
    // index per document (3.0 s at 300 000 documents), where the join reads both tables once
    // and hashes one of them. A document has at most one record (its id is the key).
    return [
      `SELECT count(*)::int AS indexable, count(l.document_id)::int AS indexed
         FROM kb_documents d
         LEFT JOIN kb_lexical_documents l
           ON l.document_id = d.document_id AND l.revision >= d.revision AND l.analyzer = $1
        WHERE d.deleted_at IS NULL AND d.body <> ''
          AND NOT (d.document_id LIKE ANY($2::text[]))`,
      [analyzer, skipped],
    ];
  }

  /** Pending documents, the age of the oldest, and documents in `error`. */
  async pending(): Promise<PendingVectorWork> {
    const rows: { pending: string; lag: number | null; errors: string }[] =
      await this.dataSource.query(
        `SELECT count(*) AS pending, EXTRACT(EPOCH FROM now() - min(vector_queued_at))::float8 AS lag,
                (SELECT count(*) FROM kb_documents WHERE vector_status = 'error') AS errors
           FROM kb_documents WHERE vector_status = 'pending'`,
      );
    return {
      pending: Number(rows[0].pending),
      lagSeconds: Math.max(0, rows[0].lag ?? 0),
      errors: Number(rows[0].errors),
    };
  }

  /** Documents per vector status (every status present, 0 when none) and leases held. */
  async statusCounts(): Promise<{ counts: Record<VectorStatus, number>; leased: number }> {
    const rows: { vector_status: VectorStatus; count: number; leased: number }[] =
      await this.dataSource.query(
        `SELECT vector_status, count(*)::int AS count,
                count(*) FILTER (WHERE vector_lease_id IS NOT NULL)::int AS leased
           FROM kb_documents GROUP BY vector_status`,
      );
    const counts = Object.fromEntries(VECTOR_STATUSES.map((status) => [status, 0])) as Record<
      VectorStatus,
      number
    >;
    let leased = 0;
    for (const row of rows) {
      counts[row.vector_status] = row.count;
      leased += row.leased;
    }
    return { counts, leased };
  }

  /**
   * Up to `limit` documents in `error`, the first to be retried first, of those the caller
   * may read (`readable`: LIKE patterns of the folders; null: all).
   */
  async errors(
    limit: number,
    readable: readonly string[] | null = null,
  ): Promise<VectorErrorRow[]> {
    return this.dataSource.query(
      `SELECT document_id, vector_error AS error, vector_attempts AS attempts,
              vector_next_attempt_at AS next_attempt_at
         FROM kb_documents
        WHERE vector_status = 'error'
          AND ($2::text[] IS NULL OR document_id LIKE ANY($2::text[]))
        ORDER BY vector_next_attempt_at NULLS FIRST LIMIT $1`,
      [limit, readable],
    );
  }
}
