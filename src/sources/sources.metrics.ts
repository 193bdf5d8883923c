import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { SourcesRepository } from './sources.repository';

/**
 * The sources in `/metrics`: runs by outcome (counted by the process that ran them), and,
 * read from the database at scrape time, each source's last success and documents.
 */
@Injectable()
export class SourcesMetrics {
  readonly runs: Counter<'source' | 'status'>;

  constructor(metrics: MetricsService, repository: SourcesRepository) {
    this.runs = new Counter({
      name: 'source_sync_runs_total',
      help: 'Runs of each source that ended, by status',
      labelNames: ['source', 'status'] as const,
      registers: [metrics.registry],
    });
    new Gauge({
      name: 'source_last_success_timestamp_seconds',
      help: 'When each source last ended a run that succeeded (Unix time); absent before its first',
      labelNames: ['source'] as const,
      registers: [metrics.registry],
      async collect() {
        const sources = await repository.all().catch(() => undefined);
        if (sources === undefined) return;
        this.reset();
        for (const source of sources) {
          if (source.last_success_at !== null) {
            this.set({ source: source.id }, new Date(source.last_success_at).getTime() / 1000);
          }
        }
      },
    });
    new Gauge({
      name: 'source_documents',
      help: 'Documents each source owns (written by it and not deleted since)',
      labelNames: ['source'] as const,
      registers: [metrics.registry],
      async collect() {
        const [sources, counts] = await Promise.all([
          repository.all(),
          repository.documentCounts(),
        ]).catch(() => [undefined, undefined] as const);
        if (sources === undefined || counts === undefined) return;
        this.reset();
        for (const source of sources) this.set({ source: source.id }, counts.get(source.id) ?? 0);
      },
    });
  }
}
