import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sources kept in sync with a folder of the knowledge base (src/sources/, docs/sources.md).
 *
 * - `kb_sources`: each declared source (its declaration as given, whether it came from
 *   `SOURCES_FILE` or the API), where its schedule stands (the next run, the failures in a
 *   row, paused after too many), its cursor (a git commit) and deletions held for a
 *   confirmation.
 * - `kb_source_runs`: every run, queued, running or ended, with its counts and failed items.
 *   At most one run of a source is queued or running, across every replica (a unique index):
 *   a second trigger finds the first.
 * - `kb_source_items`: what a source wrote, one row per item: the document it became, the
 *   version it had (an unchanged item is neither read nor written again), its provenance and
 *   the connector's notes (a page's validators). A document with a row here is owned by the
 *   source: read-only to writers, deleted when the source loses the item. A row whose version
 *   is NULL was claimed by a run that did not finish writing it.
 */
export class Sources1763800140000 implements MigrationInterface {
  name = 'Sources1763800140000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE kb_sources (
        id             text PRIMARY KEY,
        kind           text NOT NULL,
        mount          text COLLATE "C" NOT NULL,
        declaration    jsonb NOT NULL,
        origin         text NOT NULL CHECK (origin IN ('file', 'api')),
        cursor         text,
        next_run_at    timestamptz,
        failures       integer NOT NULL DEFAULT 0,
        paused         boolean NOT NULL DEFAULT false,
        held_deletions jsonb,
        last_success_at timestamptz,
        created_at     timestamptz NOT NULL DEFAULT now(),
        updated_at     timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE kb_source_runs (
        id          bigserial PRIMARY KEY,
        source_id   text NOT NULL,
        status      text NOT NULL CHECK (status IN
                      ('queued', 'running', 'succeeded', 'completed_with_errors', 'failed', 'cancelled')),
        trigger     text NOT NULL,
        confirm_deletions boolean NOT NULL DEFAULT false,
        queued_at   timestamptz NOT NULL DEFAULT now(),
        started_at  timestamptz,
        finished_at timestamptz,
        heartbeat_at timestamptz,
        runner      text,
        version     text,
        counts      jsonb NOT NULL DEFAULT '{}',
        failed_items jsonb NOT NULL DEFAULT '[]',
        message     text
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX kb_source_runs_one_active ON kb_source_runs (source_id)
        WHERE status IN ('queued', 'running')`,
    );
    await queryRunner.query(
      `CREATE INDEX kb_source_runs_by_source ON kb_source_runs (source_id, id DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX kb_source_runs_queued ON kb_source_runs (id) WHERE status = 'queued'`,
    );
    await queryRunner.query(`
      CREATE TABLE kb_source_items (
        source_id   text NOT NULL,
        key         text COLLATE "C" NOT NULL,
        document_id text COLLATE "C" NOT NULL,
        version     text,
        uri         text NOT NULL,
        validators  jsonb,
        fetched_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (source_id, key)
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX kb_source_items_document ON kb_source_items (document_id)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE kb_source_items`);
    await queryRunner.query(`DROP TABLE kb_source_runs`);
    await queryRunner.query(`DROP TABLE kb_sources`);
  }
}
