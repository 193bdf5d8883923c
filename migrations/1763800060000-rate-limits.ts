import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-principal rate-limit budgets, shared by every replica, in the shape
 * `rate-limiter-flexible`'s PostgreSQL store reads and writes (key, points, expiry in epoch
 * milliseconds). UNLOGGED: a budget lost in a crash is only a window started afresh, and
 * the writes skip the WAL.
 */
export class RateLimits1763800060000 implements MigrationInterface {
  name = 'RateLimits1763800060000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE UNLOGGED TABLE kb_rate_limits (
        key    varchar(255) PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE kb_rate_limits`);
  }
}
