import { MigrationInterface, QueryRunner } from 'typeorm';

/** The snapshot trigger, its reason given by `reason` (an SQL expression). */
const snapshotFunction = (reason: string) => `
  CREATE OR REPLACE FUNCTION kb_documents_snapshot() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO kb_document_snapshots
      (document_id, revision, title, tags, body, metadata, content_hash, deleted_at, reason, actor)
    VALUES (OLD.document_id, OLD.revision, OLD.title, OLD.tags, OLD.body, OLD.metadata,
            OLD.content_hash, OLD.deleted_at, ${reason}, kb_actor());
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END $$`;

/**
 * A version replaced by a delete says so in the history: a delete is an update that sets
 * `deleted_at` (the row stays, to be restored), so its snapshot said `update`. Versions kept
 * before keep the reason they were written with.
 */
export class DeletedVersionReason1763800230000 implements MigrationInterface {
  name = 'DeletedVersionReason1763800230000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      snapshotFunction(`CASE WHEN TG_OP = 'DELETE'
                              OR (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
                             THEN 'delete' ELSE 'update' END`),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(snapshotFunction('lower(TG_OP)'));
  }
}
