import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The service's Prometheus registry, the HTTP request histogram, and gauges computed at
 * scrape time that never fail a scrape.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  /** Scrape-time collectors that failed (their gauges were left out of that scrape). */
  readonly scrapeErrors = new Counter({
    name: 'metrics_scrape_errors_total',
    help: 'Scrapes in which a collector could not read its values (its gauges were left out)',
    labelNames: ['collector'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Gauges whose values `read` computes at scrape time (one call serves them all). When
   * `read` fails (the database is down), the gauges are left out of that scrape (no sample
   * rather than a stale or made-up one) and `metrics_scrape_errors_total{collector}`
   * counts it.
   */
  scrapedGauges<K extends string, T>(
    collector: string,
    read: () => Promise<T>,
    gauges: Record<K, { help: string; value: (values: T) => number }>,
  ): void {
    let inFlight: Promise<T | undefined> | undefined;
    // One read per scrape, shared by the gauges, and one error counted per failed scrape.
    const once = () =>
      (inFlight ??= read()
        .catch(() => {
          this.scrapeErrors.inc({ collector });
          return undefined;
        })
        .finally(() => setImmediate(() => (inFlight = undefined))));
    for (const [name, { help, value }] of Object.entries(gauges) as [
      K,
      { help: string; value: (values: T) => number },
    ][]) {
      new ScrapedGauge(name, help, this.registry, once, value);
    }
  }
}

/** A gauge set at scrape time, with no sample at all in a scrape whose read failed. */
class ScrapedGauge<T> extends Gauge {
  constructor(
    name: string,
    help: string,
    registry: Registry,
    private readonly read: () => Promise<T | undefined>,
    private readonly value: (values: T) => number,
  ) {
    super({ name, help, registers: [registry] });
  }

  override async get(): ReturnType<Gauge['get']> {
    const values = await this.read();
    if (values !== undefined) this.set(this.value(values));
    const metric = await super.get();
    return values === undefined ? { ...metric, values: [] } : metric;
  }
}
