import type { Client } from 'pg';
import request from 'supertest';
import { aDocument } from './factories';
import type { TestApp } from './support/app';

/** A document id as a URL path: each segment encoded, the slashes kept. */
export function idPath(documentId: string): string {
  return `/documents/${documentId.split('/').map(encodeURIComponent).join('/')}`;
}

/** Creates a document over REST (factory defaults plus `overrides`) and returns the response body. */
export async function createDocument(
  t: TestApp,
  overrides: Parameters<typeof aDocument>[0] = {},
  headers: Record<string, string> = {},
): Promise<{ document_id: string; revision: number; body: string } & Record<string, unknown>> {
  const response = await request(t.baseUrl)
    .post('/documents')
    .set(headers)
    .send(aDocument(overrides))
    .expect(201);
  return response.body;
}

/**
 * Inserts documents straight into the table, many in one statement, alive unless `deleted`,
 * parent_id derived as the API derives it.
 */
export async function insertIds(db: Client, ids: string[], deleted = false): Promise<void> {
  await db.query(
    `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash, deleted_at)
     SELECT id, NULLIF(regexp_replace(id, '/[^/]*$', ''), id), 'T ' || id, 'body of ' || id, 'h',
            CASE WHEN $2 THEN now() END
       FROM unnest($1::text[]) AS id`,
    [ids, deleted],
  );
}

/** GETs `path` and checks the answer: 400 INVALID_ARGUMENT naming `field` (in `field` and the message). */
export async function expectInvalidParameter(
  t: TestApp,
  path: string,
  field: string,
  headers: Record<string, string> = {},
): Promise<void> {
  const response = await request(t.baseUrl).get(path).set(headers).expect(400);
  expect(response.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', field });
  expect(response.body.error.message).toMatch(new RegExp(`^${field}: `));
}

export interface TableCounts {
  documents: number;
  alive: number;
  audit: number;
  snapshots: number;
  /** Sum of all revisions: moves whenever any document is written. */
  revisions: number;
}

/** Row counts of the three document tables, to prove that a refused request wrote nothing. */
export async function tableCounts(client: Client): Promise<TableCounts> {
  const { rows } = await client.query<Record<keyof TableCounts, string>>(
    `SELECT (SELECT count(*) FROM kb_documents) AS documents,
            (SELECT count(*) FROM kb_documents WHERE deleted_at IS NULL) AS alive,
            (SELECT count(*) FROM kb_audit) AS audit,
            (SELECT count(*) FROM kb_document_snapshots) AS snapshots,
            (SELECT coalesce(sum(revision), 0) FROM kb_documents) AS revisions`,
  );
  const row = rows[0];
  return {
    documents: Number(row.documents),
    alive: Number(row.alive),
    audit: Number(row.audit),
    snapshots: Number(row.snapshots),
    revisions: Number(row.revisions),
  };
}

/** Audit rows of one document, oldest first. */
export async function auditOf(
  client: Client,
  documentId: string,
): Promise<Array<{ operation: string; revision: number; actor: string }>> {
  const { rows } = await client.query(
    `SELECT operation, revision, actor FROM kb_audit WHERE document_id = $1 ORDER BY id`,
    [documentId],
  );
  return rows;
}

/** Snapshot rows of one document, oldest first. */
export async function snapshotsOf(
  client: Client,
  documentId: string,
): Promise<Array<{ revision: number; body: string; reason: string; actor: string }>> {
  const { rows } = await client.query(
    `SELECT revision, body, reason, actor FROM kb_document_snapshots
      WHERE document_id = $1 ORDER BY id`,
    [documentId],
  );
  return rows;
}
