import { Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { AppConfig } from '../../config/app-config';
import { VectorQueueRepository } from './vector-queue.repository';
import { VectorSyncWorker } from './vector-sync.worker';

const JOB_NAME = 'vector-recovery-sweep';

/**
 * The scheduled recovery sweep (REINDEX_CRON, every 5 minutes by default): ends leases of
 * workers that died, gives every document in `error` one more attempt, and re-queues
 * `ready` documents whose embedded revision is behind. The job is
 * registered at run time, so the schedule comes from configuration.
 */
@Injectable()
export class VectorRecoverySweep {
  private readonly logger = new Logger('VectorRecoverySweep');
  private job: CronJob | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly queue: VectorQueueRepository,
    private readonly worker: VectorSyncWorker,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  start(): void {
    if (this.job) return;
    this.job = CronJob.from({
      cronTime: this.config.reindexCron,
      onTick: async () => {
        try {
          await this.run();
        } catch (error) {
          this.logger.warn(`sweep failed: ${String(error)}`);
        }
      },
      waitForCompletion: true,
      start: true,
    });
    this.scheduler.addCronJob(JOB_NAME, this.job);
  }

  async stop(): Promise<void> {
    if (!this.job) return;
    const job = this.job;
    this.job = undefined;
    this.scheduler.deleteCronJob(JOB_NAME);
    await job.stop();
  }

  /** One sweep; returns what it re-queued. */
  async run(): Promise<{ expired: number; errors: number; behind: number }> {
    const counts = await this.queue.requeue(this.config.vectorMaxAttempts);
    if (counts.expired + counts.errors + counts.behind > 0) {
      this.logger.log(
        `re-queued ${counts.expired} expired leases, ${counts.errors} errors, ${counts.behind} documents behind`,
      );
    }
    // Also picks up retries another (stopped) server had scheduled.
    if (this.config.vectorWorkHere) this.worker.wake();
    return counts;
  }
}
