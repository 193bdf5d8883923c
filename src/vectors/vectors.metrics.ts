import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';

/** Outcome of one document taken by the sync worker. */
export type SyncResult = 'ready' | 'skipped' | 'removed' | 'retry' | 'error' | 'stale' | 'released';

/**
 * The vector pipeline's metrics, beside the foundation's `vector_sync_lag_seconds` and
 * `vector_sync_pending_documents` (computed at scrape time by the documents module).
 */
@Injectable()
export class VectorsMetrics {
  readonly documents: Counter<'result'>;
  readonly listenerUp: Gauge;
  readonly listenerReconnects: Counter;
  readonly embeddingRequests: Counter<'provider' | 'outcome'>;
  readonly embeddingDuration: Histogram<'provider'>;
  readonly searchDuration: Histogram<'store'>;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.documents = new Counter({
      name: 'vector_sync_documents_total',
      help: 'Documents processed by the vector sync worker, by result (ready, skipped, removed, retry, error, stale, released: given back during an outage)',
      labelNames: ['result'] as const,
      registers,
    });
    this.listenerUp = new Gauge({
      name: 'vector_sync_listener_up',
      help: '1 while the LISTEN kb_vector_sync connection is open, else 0',
      registers,
      // In cluster mode one worker listens: the others' 0 must not hide its 1.
      aggregator: 'max',
    });
    this.listenerReconnects = new Counter({
      name: 'vector_sync_listener_reconnects_total',
      help: 'Times the LISTEN connection was re-established after being lost',
      registers,
    });
    this.embeddingRequests = new Counter({
      name: 'embedding_requests_total',
      help: 'Embedding requests by provider and outcome (one per HTTP attempt for openai, retries included)',
      labelNames: ['provider', 'outcome'] as const,
      registers,
    });
    this.embeddingDuration = new Histogram({
      name: 'embedding_request_duration_seconds',
      help: 'Duration of embedding requests by provider',
      labelNames: ['provider'] as const,
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.searchDuration = new Histogram({
      name: 'vector_search_duration_seconds',
      help: 'Vector store search duration (query embedding excluded) by store',
      labelNames: ['store'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    });
  }
}
