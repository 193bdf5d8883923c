import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../../metrics/metrics.service';

/** Outcome of one document taken by the sync worker. */
export type SyncResult = 'ready' | 'skipped' | 'removed' | 'retry' | 'error' | 'stale' | 'released';

/**
 * The sync pipeline's counters and the listener's state, beside the queue's gauges
 * (`vector_sync_lag_seconds` and the others, computed at scrape time: vector-queue.metrics.ts).
 */
@Injectable()
export class VectorSyncMetrics {
  readonly documents: Counter<'result'>;
  readonly listenerUp: Gauge;
  readonly listenerReconnects: Counter;

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
  }
}
