import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { isDatabaseUnavailable } from '../database/database-errors';
import { IdempotencyRepository } from './idempotency.repository';
import { KEY_TTL_SECONDS } from './idempotency.service';

/** How often expired keys are deleted. */
const EVERY_MS = 10 * 60 * 1000;
/** Keys deleted per statement, and statements per run: a backlog is worked off over runs. */
const BATCH = 1000;
const BATCHES_PER_RUN = 20;

/**
 * Deletes idempotency keys older than a day (a claim already treats them as absent), a
 * bounded batch at a time so that no statement holds many row locks or runs long. Every
 * replica runs it; two at once delete disjoint rows or nothing.
 */
@Injectable()
export class IdempotencyExpiryJob {
  private readonly logger = new Logger('IdempotencyExpiry');

  constructor(private readonly repository: IdempotencyRepository) {}

  @Interval('idempotency-key-expiry', EVERY_MS)
  async tick(): Promise<void> {
    try {
      await this.run();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) this.logger.warn(`expiry failed: ${String(error)}`);
    }
  }

  /** One run; returns how many keys it deleted. */
  async run(): Promise<number> {
    let deleted = 0;
    for (let batch = 0; batch < BATCHES_PER_RUN; batch++) {
      const count = await this.repository.deleteExpired(KEY_TTL_SECONDS, BATCH);
      deleted += count;
      if (count < BATCH) break;
    }
    if (deleted > 0) this.logger.log(`deleted ${deleted} expired idempotency keys`);
    return deleted;
  }
}
