import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One notification on `kb_document_changes` per audited write, sent when its transaction
 * commits: `{"op": <the audit operation>, "document_id": <id>}`. The audit trail already
 * names every write (create, update, delete, restore, purge, and a move's two halves), from
 * the service, a source's sync or a person with psql, so a trigger on it misses none.
 * Refusals are audited too but change nothing: they send nothing. The payload stays far
 * under PostgreSQL's 8000-byte limit: ids are at most 512 bytes. A restore from a backup
 * turns the audit trail's triggers off, so restored rows send nothing.
 */
export class ChangeNotifications1763800170000 implements MigrationInterface {
  name = 'ChangeNotifications1763800170000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION kb_audit_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('kb_document_changes', json_build_object(
          'op', NEW.operation, 'document_id', NEW.document_id)::text);
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER kb_audit_notify_change AFTER INSERT ON kb_audit FOR EACH ROW
      WHEN (NEW.operation NOT LIKE 'refused:%')
      EXECUTE FUNCTION kb_audit_notify_change()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER kb_audit_notify_change ON kb_audit`);
    await queryRunner.query(`DROP FUNCTION kb_audit_notify_change()`);
  }
}
