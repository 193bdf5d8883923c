import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { DocumentsRepository } from './documents.repository';

/**
 * `vector_sync_lag_seconds`, `vector_sync_pending_documents` and
 * `vector_sync_error_documents`, computed at scrape time from one query on the partial
 * indexes of pending and failed work. One query serves the three gauges.
 */
@Injectable()
export class VectorLagMetrics {
  private inFlight: Promise<{ pending: number; lagSeconds: number; errors: number }> | undefined;

  constructor(metrics: MetricsService, repository: DocumentsRepository) {
    const read = () => {
      this.inFlight ??= repository.pendingVectorWork().finally(() => (this.inFlight = undefined));
      return this.inFlight;
    };
    new Gauge({
      name: 'vector_sync_lag_seconds',
      help: 'Age in seconds of the oldest document waiting to be embedded (0 when none)',
      registers: [metrics.registry],
      async collect() {
        this.set((await read()).lagSeconds);
      },
    });
    new Gauge({
      name: 'vector_sync_pending_documents',
      help: 'Documents waiting to be embedded',
      registers: [metrics.registry],
      async collect() {
        this.set((await read()).pending);
      },
    });
    new Gauge({
      name: 'vector_sync_error_documents',
      help: 'Documents whose embedding failed after every retry (vector status error)',
      registers: [metrics.registry],
      async collect() {
        this.set((await read()).errors);
      },
    });
  }
}
