import { Injectable } from '@nestjs/common';
import { MetricsService } from '../../metrics/metrics.service';
import { VectorQueueStatus } from './vector-queue-status.repository';

/**
 * `vector_sync_lag_seconds`, `vector_sync_pending_documents` and
 * `vector_sync_error_documents`, computed at scrape time from one query on the partial
 * indexes of pending and failed work. During a database outage they are left out of the
 * scrape (and `metrics_scrape_errors_total{collector="vector_queue"}` counts it): the rest
 * of `/metrics` still answers.
 */
@Injectable()
export class VectorQueueMetrics {
  constructor(metrics: MetricsService, queue: VectorQueueStatus) {
    metrics.scrapedGauges('vector_queue', () => queue.pending(), {
      vector_sync_lag_seconds: {
        help: 'Age in seconds of the oldest document waiting to be embedded (0 when none)',
        value: (pending) => pending.lagSeconds,
      },
      vector_sync_pending_documents: {
        help: 'Documents waiting to be embedded',
        value: (pending) => pending.pending,
      },
      vector_sync_error_documents: {
        help: 'Documents whose embedding failed after every retry (vector status error)',
        value: (pending) => pending.errors,
      },
    });
  }
}
