import { Injectable } from '@nestjs/common';
import cluster from 'node:cluster';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { askPrimary, METRICS_REQUEST, REGISTRY_REQUEST, WORKER_METRICS } from '../cluster/messages';

/** How long a worker waits for the cluster's metrics before answering its own. */
const CLUSTER_SCRAPE_TIMEOUT_MS = 6000;

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
    if (cluster.isWorker) {
      // The primary asks every listening worker for this registry's values (src/primary/primary.ts).
      process.on('message', (message: { type?: unknown; id?: unknown } | null) => {
        if (message?.type !== REGISTRY_REQUEST) return;
        const send = (metrics?: unknown) =>
          process.send?.({ type: WORKER_METRICS, id: message.id, metrics }, () => undefined);
        this.registry.getMetricsAsJSON().then(send, () => send());
      });
    }
  }

  /**
   * The exposition text of a scrape. In cluster mode (WEB_CONCURRENCY) the worker that
   * received the scrape asks the primary for every worker's metrics, aggregated (counters
   * and histograms summed, gauges read from the database by their maximum); should the
   * primary not answer in time, the scrape still succeeds with this worker's own metrics,
   * and `metrics_scrape_errors_total{collector="cluster"}` counts it.
   */
  async scrape(): Promise<string> {
    if (!cluster.isWorker) return this.registry.metrics();
    try {
      return await askPrimary<string>(METRICS_REQUEST, CLUSTER_SCRAPE_TIMEOUT_MS);
    } catch {
      this.scrapeErrors.inc({ collector: 'cluster' });
      return this.registry.metrics();
    }
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
    // Every worker reads the same database: in cluster mode the value is theirs, not a sum.
    super({ name, help, registers: [registry], aggregator: 'max' });
  }

  override async get(): ReturnType<Gauge['get']> {
    const values = await this.read();
    if (values !== undefined) this.set(this.value(values));
    const metric = await super.get();
    return values === undefined ? { ...metric, values: [] } : metric;
  }
}
