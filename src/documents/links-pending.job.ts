import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { isDatabaseUnavailable } from '../database/database-errors';
import { PreparedStatements } from '../database/prepared-statements';
import { LinksRepository } from './links.repository';
import { linkRowOf } from './links/link-row';

/** How often the queue is looked at. */
const EVERY_MS = 5_000;
/** Documents a transaction reads, and transactions a run, at most: a backlog is worked off over runs. */
const BATCH = 200;
const BATCHES_PER_RUN = 50;

/**
 * Reads the links of bodies written by anything that did not write them (kb_links_pending:
 * an older server during an upgrade, a person with psql, a restore, and every document when
 * the link table was added), a batch at a time, each in a transaction that holds the
 * documents' rows until their link rows are written (migrations/1763800200000-links.ts says
 * why that keeps them right). Every replica runs it; two at once take different documents.
 */
@Injectable()
export class LinksPendingJob {
  private readonly logger = new Logger('Links');
  private running = false;

  constructor(
    private readonly repository: LinksRepository,
    private readonly statements: PreparedStatements,
  ) {}

  @Interval('links-pending', EVERY_MS)
  async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.run();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) this.logger.warn(`reading links failed: ${String(error)}`);
    } finally {
      this.running = false;
    }
  }

  /** One run; returns how many documents' links it read. */
  async run(): Promise<number> {
    let done = 0;
    for (let batch = 0; batch < BATCHES_PER_RUN; batch++) {
      const count = await this.statements.transaction(async () => {
        const claimed = await this.repository.claimPending(BATCH);
        await this.repository.writeClaimed(
          claimed.map((row) => ({
            document_id: row.document_id,
            deleted: row.deleted,
            links: linkRowOf(row.document_id, row.body),
          })),
        );
        return claimed.length;
      });
      done += count;
      if (count < BATCH) break;
    }
    if (done > 0) {
      const left = await this.repository.pendingCount();
      this.logger.log(`read the links of ${done} documents${left > 0 ? `, ${left} to go` : ''}`);
    }
    return done;
  }
}
