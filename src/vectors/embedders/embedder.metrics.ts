import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { MetricsService } from '../../metrics/metrics.service';

/** Requests to the embedder (both providers), counted and timed. */
@Injectable()
export class EmbedderMetrics {
  readonly embeddingRequests: Counter<'provider' | 'outcome'>;
  readonly embeddingDuration: Histogram<'provider'>;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
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
  }
}
