import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { DocumentsService } from '../documents/documents.service';
import type { KnownItem } from './connectors/connector';
import { ConnectorFactory } from './connectors/connector-factory';
import { messageOf, Reconciliation } from './reconcile';
import { durationMs, SOURCE_DEFAULTS, type SourceDeclaration } from './source-declaration';
import { SourcesMetrics } from './sources.metrics';
import { NO_COUNTS, type RunRow, SourcesRepository } from './sources.repository';
import type { RunStatus } from './sources.schemas';

/** How often a server looks for due and queued runs, and for runs whose server died. */
const POLL_MS = 2000;
const ABANDONED_CHECK_MS = 30_000;
const HEARTBEAT_MS = 15_000;
/** How often the watches are matched with the declared sources, and a failed one retried. */
const WATCHES_CHECK_MS = 10_000;
const WATCH_RETRY_MS = 10 * 60_000;
/** After failures in a row: retry at once, after 15 min, 1 h, 6 h, then pause. */
const RETRY_DELAYS_MS = [0, 15 * 60_000, 60 * 60_000, 6 * 60 * 60_000];
/** A schedule's jitter: up to this share of its interval, either way. */
const JITTER = 0.1;

/**
 * Carries out the sources' runs: every server process that does background work (not a
 * cluster's web workers) queues the runs that are due, takes queued ones (one replica each,
 * `FOR UPDATE SKIP LOCKED`), enumerates through the source's connector and reconciles, and
 * records the outcome, the next run and the metrics. A run beats a heartbeat; a run whose
 * server stopped beating is failed by another and the source retried.
 */
@Injectable()
export class SourceRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('SourceRunner');
  private readonly me = randomUUID();
  private readonly active = new Map<string, AbortController>();
  private timer?: NodeJS.Timeout;
  private lastAbandonedCheck = 0;
  private lastWatchesCheck = 0;
  /** The watched folders by source: how to stop each, or when a failed watch may be retried. */
  private readonly watches = new Map<
    string,
    { declaration: string; stop?: () => Promise<void>; retryAt?: number }
  >();
  private polling = false;
  private stopped = false;

  constructor(
    private readonly config: AppConfig,
    private readonly repository: SourcesRepository,
    private readonly documents: DocumentsService,
    private readonly connectors: ConnectorFactory,
    private readonly metrics: SourcesMetrics,
  ) {}

  /** Whether this process runs sources (a cluster's web workers leave it to the first). */
  get here(): boolean {
    return this.config.clusterRole !== 'web';
  }

  onApplicationBootstrap(): void {
    if (!this.here) return;
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const controller of this.active.values()) {
      controller.abort(new Error('the server is stopping'));
    }
    await Promise.all(
      [...this.watches.values()].map((watch) => watch.stop?.().catch(() => undefined)),
    );
    this.watches.clear();
    const deadline = Date.now() + 10_000;
    while (this.active.size > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Looks for work now (after a sync request, rather than at the next poll). */
  nudge(): void {
    if (this.here) setImmediate(() => void this.poll());
  }

  private async poll(): Promise<void> {
    if (this.polling || this.stopped) return;
    this.polling = true;
    try {
      if (Date.now() - this.lastAbandonedCheck > ABANDONED_CHECK_MS) {
        this.lastAbandonedCheck = Date.now();
        for (const source of await this.repository.failAbandoned()) {
          this.metrics.runs.inc({ source, status: 'failed' });
        }
      }
      if (Date.now() - this.lastWatchesCheck > WATCHES_CHECK_MS) {
        this.lastWatchesCheck = Date.now();
        await this.matchWatches();
      }
      await this.repository.enqueueDue();
      while (this.active.size < this.config.sourcesRuns && !this.stopped) {
        const run = await this.repository.claimRun(this.me);
        if (run === null) break;
        void this.execute(run);
      }
    } catch (error) {
      this.logger.warn(`sources: ${messageOf(error)}`);
    } finally {
      this.polling = false;
    }
  }

  /**
   * Watches each folder source (a change queues a run at once, the schedule's sweep catching
   * what a watch misses); stops the watches of sources gone or changed. A watch that fails
   * (the folder removed, the system's watches exhausted) is logged and tried again later.
   */
  private async matchWatches(): Promise<void> {
    const sources = await this.repository.all();
    this.connectors.forgetAllBut(new Set(sources.map((source) => source.id)));
    const wanted = new Map(
      sources
        // Watched from the end of its first sync on: that run lists everything anyway, and a
        // watch's own first scan of a large folder would compete with it.
        .filter((s) => s.kind === 'folder' && s.declaration.enabled !== false)
        .filter((s) => s.last_success_at !== null)
        .map((source) => [source.id, source.declaration]),
    );
    for (const [id, watch] of this.watches) {
      const declaration = wanted.get(id);
      if (declaration === undefined || JSON.stringify(declaration) !== watch.declaration) {
        this.watches.delete(id);
        await watch.stop?.().catch(() => undefined);
      }
    }
    for (const [id, declaration] of wanted) {
      const watch = this.watches.get(id);
      if (watch !== undefined && (watch.stop !== undefined || Date.now() < (watch.retryAt ?? 0))) {
        continue;
      }
      const entry: { declaration: string; stop?: () => Promise<void>; retryAt?: number } = {
        declaration: JSON.stringify(declaration),
      };
      this.watches.set(id, entry);
      const connector = this.connectors.connectorFor(declaration);
      // What changed between the last run and the watch's start is found by one run now.
      const queue = () =>
        void this.repository
          .enqueue(id, 'watch')
          .then(() => this.nudge())
          .catch((error) => this.logger.warn(`source ${id}: ${messageOf(error)}`));
      queue();
      entry.stop = connector.watch?.(queue, (error) => {
        this.logger.warn(`source ${id}: the folder is no longer watched: ${error.message}`);
        entry.stop = undefined;
        entry.retryAt = Date.now() + WATCH_RETRY_MS;
      });
    }
  }

  private async execute(run: RunRow): Promise<void> {
    const controller = new AbortController();
    this.active.set(run.id, controller);
    const heartbeat = setInterval(() => {
      void this.repository
        .heartbeat(run.id)
        .then(() => this.repository.stillRunning(run.id))
        .then((running) => {
          if (!running) controller.abort(new Error('the run was cancelled'));
        })
        .catch(() => undefined);
    }, HEARTBEAT_MS);
    try {
      await this.carryOut(run, controller.signal);
    } catch (error) {
      this.logger.error(`source ${run.source_id}: run ${run.id}: ${messageOf(error)}`);
    } finally {
      clearInterval(heartbeat);
      this.active.delete(run.id);
    }
  }

  private async carryOut(run: RunRow, signal: AbortSignal): Promise<void> {
    const source = await this.repository.find(run.source_id);
    if (source === null) {
      await this.end(run, 'cancelled', { message: 'the source was removed' });
      return;
    }
    const declaration = source.declaration;
    const started = Date.now();
    try {
      const items = await this.repository.items(source.id);
      const known = new Map<string, KnownItem>(
        [...items].map(([key, row]) => [
          key,
          { version: row.version ?? '', uri: row.uri, validators: row.validators ?? undefined },
        ]),
      );
      const connector = this.connectors.connectorFor(declaration);
      const enumeration = await connector.enumerate({
        known,
        cursor: source.cursor,
        signal,
        maxBodyBytes: this.config.limits.maxBodyBytes,
      });
      const result = await new Reconciliation(
        {
          declaration,
          runId: run.id,
          enumeration,
          known: items,
          confirmDeletions: run.confirm_deletions,
          signal,
        },
        this.documents,
        this.repository,
        this.logger,
      ).run();
      const whole = enumeration.complete && result.counts.failed === 0;
      const status: RunStatus = whole ? 'succeeded' : 'completed_with_errors';
      const notes = [
        enumeration.complete ? null : 'the listing was not complete: nothing was deleted',
        result.held === null
          ? null
          : `${result.held.keys.length} deletions held: more than ${Math.round((declaration.max_delete ?? SOURCE_DEFAULTS.max_delete) * 100)} % of the source's documents; confirm with POST /sources/${source.id}/sync?confirm_deletions=true`,
      ].filter((note): note is string => note !== null);
      await this.end(run, status, {
        counts: result.counts,
        failedItems: result.failedItems,
        version: enumeration.version ?? null,
        message: notes.length === 0 ? null : notes.join('; '),
      });
      await this.repository.afterRun(source.id, {
        succeeded: true,
        // A run that left items unwritten, or deletions held, keeps the old cursor: the next
        // one lists again (an unmoved head would otherwise answer that nothing changed).
        cursor: whole && result.held === null ? (enumeration.cursor ?? null) : source.cursor,
        held: result.held,
        nextRunAt: this.nextRun(declaration),
        failures: 0,
        paused: false,
      });
      this.logger.log(
        `source ${source.id}: ${status} in ${Date.now() - started} ms: ${JSON.stringify(result.counts)}`,
      );
      if (declaration.kind === 'folder' && !this.watches.has(source.id)) {
        // Watched from the end of its first sync, not from the next look at the watches.
        this.lastWatchesCheck = 0;
        this.nudge();
      }
    } catch (error) {
      const cancelled = signal.aborted;
      const message = messageOf(cancelled ? signal.reason : error);
      await this.end(run, cancelled ? 'cancelled' : 'failed', { message });
      if (cancelled && this.stopped) {
        // Stopped with the server: due again at once, on this server or another.
        await this.repository.afterRun(source.id, {
          succeeded: false,
          held: source.held_deletions,
          nextRunAt: new Date(),
          failures: source.failures,
          paused: source.paused,
        });
        return;
      }
      const failures = source.failures + 1;
      const paused = failures > RETRY_DELAYS_MS.length;
      await this.repository.afterRun(source.id, {
        succeeded: false,
        held: source.held_deletions,
        nextRunAt: paused ? null : new Date(Date.now() + RETRY_DELAYS_MS[failures - 1]),
        failures,
        paused,
      });
      this.logger.warn(
        `source ${source.id}: run ${run.id} ${cancelled ? 'cancelled' : 'failed'}: ${message}${paused ? ' (paused until a sync is asked for)' : ''}`,
      );
    }
  }

  private async end(
    run: RunRow,
    status: RunStatus,
    fields: Partial<Parameters<SourcesRepository['finishRun']>[2]>,
  ): Promise<void> {
    await this.repository.finishRun(run.id, status, {
      counts: fields.counts ?? { ...NO_COUNTS },
      failedItems: fields.failedItems ?? [],
      version: fields.version ?? null,
      message: fields.message ?? null,
    });
    this.metrics.runs.inc({ source: run.source_id, status });
  }

  /** The next scheduled run: the source's interval from now, jittered. */
  private nextRun(declaration: SourceDeclaration): Date {
    const every = durationMs(declaration.every ?? SOURCE_DEFAULTS.every[declaration.kind])!;
    const jitter = (Math.random() * 2 - 1) * JITTER * every;
    return new Date(Date.now() + every + jitter);
  }
}
