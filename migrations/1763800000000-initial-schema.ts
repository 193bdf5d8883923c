import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Documents, their audit trail and their snapshots, with their triggers (docs/architecture.md).
 *
 * "Content" below means body, title, tags, metadata and deleted_at: the columns a user
 * writes. The `vector_*` columns are the sync pipeline's bookkeeping; changing only those
 * bumps nothing, audits nothing, snapshots nothing and notifies nothing.
 */
export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE kb_documents (
        document_id       text COLLATE "C" PRIMARY KEY
                          CHECK (octet_length(document_id) BETWEEN 1 AND 512),
        parent_id         text COLLATE "C",
        title             text NOT NULL DEFAULT '',
        tags              text[] NOT NULL DEFAULT '{}',
        body              text NOT NULL DEFAULT '',
        metadata          jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(metadata) = 'object'),
        revision          integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
        content_hash      text NOT NULL,
        vector_status     text NOT NULL DEFAULT 'pending'
                          CHECK (vector_status IN ('pending', 'ready', 'error', 'skipped', 'removed')),
        vector_revision   integer,
        vector_attempts   integer NOT NULL DEFAULT 0,
        vector_error      text,
        vector_claimed_at timestamptz,
        vector_queued_at  timestamptz DEFAULT now(),
        created_at        timestamptz NOT NULL DEFAULT now(),
        updated_at        timestamptz NOT NULL DEFAULT now(),
        deleted_at        timestamptz
      )`);
    // Byte order ("C"), so LIKE 'prefix%' is an index range scan; only alive rows.
    await queryRunner.query(
      `CREATE INDEX kb_documents_alive_id ON kb_documents (document_id) WHERE deleted_at IS NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE kb_audit (
        id          bigserial PRIMARY KEY,
        operation   text NOT NULL,
        document_id text COLLATE "C" NOT NULL,
        revision    integer,
        actor       text NOT NULL,
        at          timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX kb_audit_document ON kb_audit (document_id, id)`);

    await queryRunner.query(`
      CREATE TABLE kb_document_snapshots (
        id           bigserial PRIMARY KEY,
        document_id  text COLLATE "C" NOT NULL,
        revision     integer NOT NULL,
        title        text NOT NULL,
        tags         text[] NOT NULL,
        body         text NOT NULL,
        metadata     jsonb NOT NULL,
        content_hash text NOT NULL,
        deleted_at   timestamptz,
        reason       text NOT NULL,
        actor        text NOT NULL,
        snapshot_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX kb_document_snapshots_document ON kb_document_snapshots (document_id, revision DESC, id DESC)`,
    );

    await queryRunner.query(`
      CREATE FUNCTION kb_actor() RETURNS text LANGUAGE sql STABLE AS $$
        SELECT COALESCE(NULLIF(current_setting('app.actor', true), ''), current_user::text)
      $$`);

    // updated_at, and the hand-off to the sync pipeline: any content change makes the
    // document pending again, whoever wrote it (the service or a person with psql).
    await queryRunner.query(`
      CREATE FUNCTION kb_documents_touch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.updated_at := now();
        NEW.vector_status := 'pending';
        NEW.vector_queued_at := now();
        NEW.vector_attempts := 0;
        NEW.vector_error := NULL;
        NEW.vector_claimed_at := NULL;
        RETURN NEW;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER kb_documents_touch BEFORE UPDATE ON kb_documents FOR EACH ROW
      WHEN ((OLD.body, OLD.title, OLD.tags, OLD.metadata, OLD.deleted_at)
            IS DISTINCT FROM (NEW.body, NEW.title, NEW.tags, NEW.metadata, NEW.deleted_at))
      EXECUTE FUNCTION kb_documents_touch()`);

    await queryRunner.query(`
      CREATE FUNCTION kb_documents_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'TRUNCATE of kb_documents is refused: documents are soft-deleted one by one'
          USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER kb_documents_truncate_guard BEFORE TRUNCATE ON kb_documents
      FOR EACH STATEMENT EXECUTE FUNCTION kb_documents_refuse_truncate()`);

    await queryRunner.query(`
      CREATE FUNCTION kb_documents_audit() RETURNS trigger LANGUAGE plpgsql AS $$
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
        END IF;
        INSERT INTO kb_audit (operation, document_id, revision, actor)
        VALUES (op, COALESCE(NEW.document_id, OLD.document_id),
                CASE WHEN TG_OP = 'DELETE' THEN OLD.revision ELSE NEW.revision END, kb_actor());
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER kb_documents_audit_write AFTER INSERT OR DELETE ON kb_documents
      FOR EACH ROW EXECUTE FUNCTION kb_documents_audit()`);
    await queryRunner.query(`
      CREATE TRIGGER kb_documents_audit_update AFTER UPDATE ON kb_documents FOR EACH ROW
      WHEN ((OLD.body, OLD.title, OLD.tags, OLD.metadata, OLD.deleted_at, OLD.revision)
            IS DISTINCT FROM (NEW.body, NEW.title, NEW.tags, NEW.metadata, NEW.deleted_at, NEW.revision))
      EXECUTE FUNCTION kb_documents_audit()`);

    await queryRunner.query(`
      CREATE FUNCTION kb_documents_snapshot() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO kb_document_snapshots
          (document_id, revision, title, tags, body, metadata, content_hash, deleted_at, reason, actor)
        VALUES (OLD.document_id, OLD.revision, OLD.title, OLD.tags, OLD.body, OLD.metadata,
                OLD.content_hash, OLD.deleted_at, lower(TG_OP), kb_actor());
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER kb_documents_snapshot_update BEFORE UPDATE ON kb_documents FOR EACH ROW
      WHEN ((OLD.body, OLD.title, OLD.tags, OLD.metadata, OLD.deleted_at)
            IS DISTINCT FROM (NEW.body, NEW.title, NEW.tags, NEW.metadata, NEW.deleted_at))
      EXECUTE FUNCTION kb_documents_snapshot()`);
    await queryRunner.query(`
      CREATE TRIGGER kb_documents_snapshot_delete BEFORE DELETE ON kb_documents
      FOR EACH ROW EXECUTE FUNCTION kb_documents_snapshot()`);

    await queryRunner.query(`
      CREATE FUNCTION kb_documents_notify_vector_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        row kb_documents;
      BEGIN
        IF TG_OP = 'DELETE' THEN row := OLD; ELSE row := NEW; END IF;
        PERFORM pg_notify('kb_vector_sync', json_build_object(
          'op', lower(TG_OP), 'document_id', row.document_id, 'revision', row.revision)::text);
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER kb_documents_vector_sync_write AFTER INSERT OR DELETE ON kb_documents
      FOR EACH ROW EXECUTE FUNCTION kb_documents_notify_vector_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER kb_documents_vector_sync_update AFTER UPDATE ON kb_documents FOR EACH ROW
      WHEN ((OLD.body, OLD.title, OLD.tags, OLD.metadata, OLD.deleted_at)
            IS DISTINCT FROM (NEW.body, NEW.title, NEW.tags, NEW.metadata, NEW.deleted_at))
      EXECUTE FUNCTION kb_documents_notify_vector_sync()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE kb_document_snapshots`);
    await queryRunner.query(`DROP TABLE kb_audit`);
    await queryRunner.query(`DROP TABLE kb_documents`);
    for (const fn of [
      'kb_documents_notify_vector_sync',
      'kb_documents_snapshot',
      'kb_documents_audit',
      'kb_documents_refuse_truncate',
      'kb_documents_touch',
      'kb_actor',
    ]) {
      await queryRunner.query(`DROP FUNCTION ${fn}()`);
    }
  }
}
