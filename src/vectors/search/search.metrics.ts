import { Injectable } from '@nestjs/common';
import { Histogram } from 'prom-client';
import { MetricsService } from '../../metrics/metrics.service';

/** How long each side of a search takes. */
@Injectable()
export class SearchMetrics {
  readonly searchDuration: Histogram<'store'>;

  constructor(metrics: MetricsService) {
    this.searchDuration = new Histogram({
      name: 'vector_search_duration_seconds',
      help: 'Vector store search duration (query embedding excluded) by store',
      labelNames: ['store'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [metrics.registry],
    });
  }
}
