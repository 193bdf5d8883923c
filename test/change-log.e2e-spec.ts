import type { Client } from 'pg';
import { changesSince, logHead, pruneLog, type ChangeLog } from '../src/database/change-log';
import { createTestDatabase, type TestDatabase } from './support/database';

/**
 * The change log servers follow the lexical index and the vectors by: a position read from a
 * log pruned empty (no write for longer than the retention) must let the next read find
 * nothing new, not "too far behind": that made every search reload the whole index.
 */
describe('change log', () => {
  const LOG: ChangeLog = { log: 'kb_lexical_changes', meta: 'kb_lexical_meta' };
  let db: TestDatabase;
  let client: Client;
  const query = (text: string, values?: unknown[]) =>
    client.query(text, values).then((result) => result.rows as never[]);

  beforeAll(async () => {
    db = await createTestDatabase();
    client = await db.client();
  });
  afterAll(() => db.drop());

  it('follows writes, and stands where it was pruned once pruned empty', async () => {
    await client.query(
      `INSERT INTO ${LOG.log} (document_id, changed_at)
       SELECT 'doc-' || i, now() - interval '2 hours' FROM generate_series(1, 3) AS i`,
    );
    const before = await logHead(query, LOG);
    await client.query(`INSERT INTO ${LOG.log} (document_id) VALUES ('doc-new')`);
    const changed = await changesSince(query, LOG, before);
    expect(changed?.documents).toEqual(['doc-new']);

    await client.query(`UPDATE ${LOG.log} SET changed_at = now() - interval '2 hours'`);
    await pruneLog(query, LOG, 60 * 60 * 1000);
    expect((await client.query(`SELECT count(*)::int AS n FROM ${LOG.log}`)).rows[0].n).toBe(0);
    // A server loading now: the position it reads must be usable by the next read.
    const head = await logHead(query, LOG);
    const next = await changesSince(query, LOG, head);
    expect(next).toBeDefined();
    expect(next?.documents).toEqual([]);
    // And a write after the prune is seen from it.
    await client.query(`INSERT INTO ${LOG.log} (document_id) VALUES ('doc-later')`);
    expect((await changesSince(query, LOG, next!.next))?.documents).toEqual(['doc-later']);
    // A server whose position is below the pruned entries still reloads.
    expect(await changesSince(query, LOG, before)).toBeUndefined();
  });
});
