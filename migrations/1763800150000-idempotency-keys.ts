import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `kb_idempotency_keys`: the first answer to a write sent with an `Idempotency-Key`, kept a
 * day per principal and key so that a retry (on any replica, after a restart) gets that
 * answer instead of writing again (src/idempotency/, docs/documents.md).
 *
 * A row is claimed (`running`, with a fresh `token`) before the write and becomes `done`,
 * with the answer, in the write's own transaction. `claimed_at` dates the claim (a claim
 * older than the lease may be taken over by a retry; the token tells the first claimant it
 * lost), `created_at` the key (the expiry job deletes keys a day old, oldest first, through
 * its index). The answer is `json`, not `jsonb`: a replay repeats the body with its keys in
 * the order the first answer had them.
 */
export class IdempotencyKeys1763800150000 implements MigrationInterface {
  name = 'IdempotencyKeys1763800150000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE kb_idempotency_keys (
        principal   text NOT NULL,
        key         text NOT NULL,
        fingerprint text NOT NULL,
        state       text NOT NULL CHECK (state IN ('running', 'done')),
        token       uuid NOT NULL,
        answer      json,
        created_at  timestamptz NOT NULL DEFAULT now(),
        claimed_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (principal, key),
        CHECK ((state = 'done') = (answer IS NOT NULL))
      )`);
    await queryRunner.query(
      `CREATE INDEX kb_idempotency_keys_created_at ON kb_idempotency_keys (created_at)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE kb_idempotency_keys`);
  }
}
