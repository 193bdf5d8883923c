import { MigrationInterface, QueryRunner } from 'typeorm';

/** The audit trigger's body; `restoreAsked` decides what an update that brings a revision back is. */
const auditFunction = (restoreAsked: boolean) => `
  CREATE OR REPLACE FUNCTION kb_documents_audit() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    op text;
  BEGIN
    IF TG_OP = 'INSERT' THEN
      op := 'create';
    ELSIF TG_OP = 'DELETE' THEN
      op := 'purge';
    ELSIF OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
      op := 'delete';
    ELSIF OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS NULL THEN
      op := 'restore';
    ELSE
      op := 'update';
    END IF;${
      restoreAsked
        ? `
    -- The statement that brings back an earlier revision says so (app.operation, local to
    -- its transaction), and the setting is spent on the one row it restores.
    IF op = 'update' AND current_setting('app.operation', true) = 'restore' THEN
      op := 'restore';
    END IF;
    PERFORM set_config('app.operation', '', true);`
        : ''
    }
    INSERT INTO kb_audit (operation, document_id, revision, actor)
    VALUES (op, COALESCE(NEW.document_id, OLD.document_id),
            CASE WHEN TG_OP = 'DELETE' THEN OLD.revision ELSE NEW.revision END, kb_actor());
    RETURN NULL;
  END $$`;

/**
 * Bringing back an earlier revision of an alive document is audited as `restore`, as an
 * undelete is, rather than as an `update`: the change feed and the history say what was done.
 */
export class RestoreAudited1763800160000 implements MigrationInterface {
  name = 'RestoreAudited1763800160000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(auditFunction(true));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(auditFunction(false));
  }
}
