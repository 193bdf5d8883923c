import { Injectable } from '@nestjs/common';
import { Histogram } from 'prom-client';
import { MetricsService } from '../../metrics/metrics.service';

/** How long each side of a search takes, and the query's embedding. */
@Injectable()
export class SearchMetrics {
  readonly searchDuration: Histogram<'store'>;
  readonly queryEmbeddingDuration: Histogram<'provider'>;

  constructor(metrics: MetricsService) {
    this.searchDuration = new Histogram({
      name: 'vector_search_duration_seconds',
      help: 'Vector store search duration (query embedding excluded) by store',
      labelNames: ['store'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [metrics.registry],
    });
    this.queryEmbeddingDuration = new Histogram({
      name: 'search_query_embedding_duration_seconds',
      help: "Time to embed a search's query, by embedder (local model: its query thread)",
      labelNames: ['provider'] as const,
      buckets: [
        0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 1,
      ],
      registers: [metrics.registry],
    });
  }
}
