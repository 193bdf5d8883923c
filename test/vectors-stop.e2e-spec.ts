import type { Client } from 'pg';
import request from 'supertest';
import { startTestApp } from './support/app';
import { createTestDatabase, type TestDatabase } from './support/database';
import { waitFor } from './support/wait';

/**
 * A server that stops while its pipeline is chunking and embedding: the documents in flight
 * go back to the queue as they were, no attempt counted against them (they were not at
 * fault), and the next server indexes them all.
 */
describe('vector pipeline stopping mid-batch', () => {
  let db: TestDatabase;
  let sql: Client;
  beforeAll(async () => {
    db = await createTestDatabase();
    sql = await db.client();
  });
  afterAll(async () => {
    await sql.end();
    await db.drop();
  });

  const counts = async () =>
    (
      await sql.query<{ ready: number; failed: number; attempts: number; errors: number }>(
        `SELECT count(*) FILTER (WHERE vector_status = 'ready')::int AS ready,
                count(*) FILTER (WHERE vector_status = 'error')::int AS failed,
                coalesce(sum(vector_attempts), 0)::int AS attempts,
                count(vector_error)::int AS errors
           FROM kb_documents`,
      )
    ).rows[0];

  it('gives the documents in flight back without counting an attempt', async () => {
    // Written with the pipeline off, so that the next server starts on a full queue.
    const writer = await startTestApp({}, db);
    const paragraph = (n: number) =>
      `Paragraph ${n} of the runbook: restart the replica, check the lag, page the owner. `.repeat(
        8,
      );
    await request(writer.baseUrl)
      .post('/documents/bulk')
      .send({
        items: Array.from({ length: 250 }, (_, n) => ({
          op: 'create',
          document_id: `stop/doc-${n}.md`,
          body: Array.from({ length: 4 }, (_, k) => paragraph(n * 4 + k)).join('\n\n'),
        })),
      })
      .expect(200);
    await writer.close();

    const first = await startTestApp({ VECTOR_SYNC_ENABLED: 'true' }, db);
    // Stopped as soon as its threads have indexed something: later batches are in flight.
    await waitFor(async () => (await counts()).ready > 0, 'a first document to be indexed', 60_000);
    await first.close();
    const stopped = await counts();
    expect(stopped.ready).toBeLessThan(250);
    expect(stopped).toMatchObject({ failed: 0, attempts: 0, errors: 0 });

    const next = await startTestApp({ VECTOR_SYNC_ENABLED: 'true' }, db);
    try {
      await waitFor(async () => (await counts()).ready === 250, 'every document indexed', 90_000);
      expect(await counts()).toMatchObject({ failed: 0, attempts: 0, errors: 0 });
    } finally {
      await next.close();
    }
  }, 180_000);
});
