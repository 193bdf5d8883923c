import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A token for the sync worker's lease, apart from its expiry: a live worker renews its
 * leases (the expiry moves) while keeping the token it was given, so leases can be short
 * and a crashed worker's documents are taken over within one of them. Nullable, no
 * default: adding it rewrites nothing.
 */
export class VectorLeaseToken1763800050000 implements MigrationInterface {
  name = 'VectorLeaseToken1763800050000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE kb_documents ADD COLUMN vector_lease_id uuid`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE kb_documents DROP COLUMN vector_lease_id`);
  }
}
