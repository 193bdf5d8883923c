import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source-options';
import { ANALYZER_VERSION } from '../src/vectors/text/analyzer';
import type { AppConfig } from '../src/config/app-config';
import type { EmbeddingsChoice } from '../src/config/embeddings-choice';
import { LexicalReplica } from '../src/vectors/lexical/lexical.replica';
import { LexicalStore } from '../src/vectors/lexical/lexical.store';
import { encodePostings, joinTerms, lexicalRecord } from '../src/vectors/lexical/lexical-record';
import type { WeightedTerm } from '../src/vectors/lexical/lexical-index';
import { trainLsa } from '../src/vectors/semantic/lsa';
import { createTestDatabase, type TestDatabase } from './support/database';

const TOPICS = [
  'postgres replica snapshot restart index',
  'garden tomato harvest summer rain',
  'engine wheel road driver garage',
  'invoice payment ledger account tax',
];

/** A document's text: words of one topic, and a few of the next, varied by its number. */
function textOf(n: number, revision: number): string {
  const words = TOPICS[n % TOPICS.length].split(' ');
  const others = TOPICS[(n + 1) % TOPICS.length].split(' ');
  return Array.from({ length: 12 + (n % 7) }, (_, i) =>
    i % 5 === 4 ? others[(i + n) % others.length] : words[(i * (n + revision)) % words.length],
  ).join(' ');
}

const QUERIES: WeightedTerm[][] = [
  [{ term: 'snapshot', weight: 1 }],
  [
    { term: 'garden', weight: 1 },
    { term: 'rain', weight: 1 },
  ],
  [
    { term: 'ledger', weight: 1 },
    { term: 'road', weight: 0.3 },
    { term: 'restart', weight: 1 },
  ],
];

/**
 * The lexical index read back from its snapshot and brought up to date from the change log
 * ranks as one built from the records; a snapshot that cannot be brought up to date, is
 * corrupt or of another format is not used, and the index is built from the records.
 */
describe('lexical index snapshot', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  const replicas: LexicalReplica[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 4)).initialize();
  });
  // Each test's replicas stop with it, writing nothing: a replica left running would refresh
  // and save on its timers while a later test counts on what it saved.
  afterEach(async () => {
    await Promise.all(replicas.splice(0).map((replica) => replica.close({ withinMs: 0 })));
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  /** A replica, stopped when its test ends. */
  function replicaOf(snapshots: boolean): LexicalReplica {
    const replica = new LexicalReplica(dataSource, { snapshots });
    replicas.push(replica);
    return replica;
  }

  /** A replica loaded now (with snapshots, or from the records only). */
  async function loaded(snapshots: boolean): Promise<LexicalReplica> {
    const replica = replicaOf(snapshots);
    await replica.current();
    return replica;
  }

  /**
   * `true` when `replica` saves its snapshot now. A save gives way at once to anything holding
   * the snapshot's table (as a periodic save does), so a refusal is tried twice more; should
   * the last fail too, what held the table then is the answer, for the failure to name it.
   */
  async function saves(replica: LexicalReplica): Promise<true | string> {
    for (let attempt = 1; ; attempt++) {
      if (await replica.saveSnapshot(true)) return true;
      if (attempt === 3) {
        const holders: unknown[] = await dataSource.query(
          `SELECT l.mode, l.granted, a.backend_type, a.state, left(a.query, 200) AS query
             FROM pg_locks l LEFT JOIN pg_stat_activity a USING (pid)
            WHERE l.relation = 'kb_lexical_snapshot'::regclass AND l.pid <> pg_backend_pid()`,
        );
        return `not saved; holding the table: ${JSON.stringify(holders)}`;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async function write(numbers: readonly number[], revision = 1): Promise<void> {
    for (const n of numbers) {
      const id = `topic${n % TOPICS.length}/doc-${n}.md`;
      const text = textOf(n, revision);
      const record = lexicalRecord(`Document ${n}`, text, [{ headings: [], content: text }]);
      await dataSource.query(
        `INSERT INTO kb_documents (document_id, content_hash) VALUES ($1, 'h')
         ON CONFLICT (document_id) DO NOTHING`,
        [id],
      );
      await dataSource.query(
        `INSERT INTO kb_lexical_documents
                (document_id, revision, analyzer, tags, lengths, passage_lengths, terms, postings)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (document_id) DO UPDATE
            SET revision = EXCLUDED.revision, tags = EXCLUDED.tags, lengths = EXCLUDED.lengths,
                passage_lengths = EXCLUDED.passage_lengths, terms = EXCLUDED.terms,
                postings = EXCLUDED.postings`,
        [
          id,
          revision,
          ANALYZER_VERSION,
          n % 3 === 0 ? ['odd-one'] : [],
          record.lengths.slice(0, 3),
          record.passageLengths,
          joinTerms(record.terms),
          encodePostings(record),
        ],
      );
    }
  }

  /** Every query's answer, with and without filters. */
  async function answers(replica: LexicalReplica) {
    return Promise.all(
      QUERIES.flatMap((query) => [
        replica.search(query, 50),
        replica.search(query, 5, { folder: 'topic1/' }),
        replica.search(query, 5, { tags: ['odd-one'], folders: ['topic0/', 'topic2/'] }),
      ]),
    );
  }

  async function expectRebuiltFromRecords(): Promise<void> {
    const replica = await loaded(true);
    expect(replica.loadedFrom).toBe('records');
    const reference = await loaded(false);
    expect(await answers(replica)).toEqual(await answers(reference));
  }

  it('reads the snapshot back and replays the changes since: every answer as a rebuild gives', async () => {
    await write(Array.from({ length: 60 }, (_, n) => n));
    const first = await loaded(true);
    expect(first.loadedFrom).toBe('records');
    expect(await saves(first)).toBe(true);
    // Saved already: nothing to save again until the index changes.
    expect(await first.saveSnapshot(true)).toBe(false);

    await write([3, 8, 21, 40], 2);
    await write([60, 61, 62, 63, 64]);
    await dataSource.query(`DELETE FROM kb_documents WHERE document_id = ANY($1)`, [
      ['topic1/doc-5.md', 'topic2/doc-10.md', 'topic3/doc-11.md'],
    ]);

    const restarted = await loaded(true);
    expect(restarted.loadedFrom).toBe('snapshot');
    const reference = await loaded(false);
    expect(reference.loadedFrom).toBe('records');
    // The same documents and postings (its dictionary also keeps the terms of documents
    // replaced since, as a server running since then does: they rank nothing).
    const { terms, ...held } = restarted.stats;
    const { terms: rebuiltTerms, ...rebuilt } = reference.stats;
    expect(held).toEqual(rebuilt);
    expect(terms).toBeGreaterThanOrEqual(rebuiltTerms);
    expect(restarted.stats.documents).toBe(62);
    const expected = await answers(reference);
    expect(expected[0].length).toBeGreaterThan(10);
    expect(await answers(restarted)).toEqual(expected);

    // The semantic model's vectors, computed from either index, rank alike.
    const index = await reference.current();
    const sample = [...index.documents()].map(({ documentId }) => index.termCountsOf(documentId)!);
    const model = trainLsa(sample, { dimensions: 4, seed: 3 });
    await Promise.all([restarted.useModel(model), reference.useModel(model)]);
    const question = new Map([
      ['garden', 1],
      ['ledger', 1],
    ]);
    const semantic = await restarted.semanticSearch(question, 20);
    expect(semantic?.length).toBeGreaterThan(5);
    expect(semantic).toEqual(await reference.semanticSearch(question, 20));

    // Brought up to date, it saves the changes it replayed, and its vectors: a restart under
    // the same model reads them back, computing only those of documents changed since.
    expect(await saves(restarted)).toBe(true);
    await write([12, 13], 3);
    await write([65]);
    const withModel = replicaOf(true);
    await withModel.useModel(model);
    await withModel.current();
    expect(withModel.loadedFrom).toBe('snapshot');
    expect(withModel.semanticModel).toBe(model);
    const fromRecords = await loaded(false);
    await fromRecords.useModel(model);
    const everything = new Map([...question, ['harvest', 2], ['snapshot', 1]]);
    const found = await withModel.semanticSearch(everything, 70);
    expect(found?.length).toBeGreaterThan(40);
    expect(found).toEqual(await fromRecords.semanticSearch(everything, 70));
  });

  it('is not used once the change log no longer reaches back to it', async () => {
    const replica = await loaded(true);
    await write([70]);
    await replica.refresh();
    expect(await saves(replica)).toBe(true);
    await write([71, 72]);
    // The entries since the snapshot pruned (older than the retention).
    await dataSource.query(`
      WITH gone AS (DELETE FROM kb_lexical_changes RETURNING id)
      UPDATE kb_lexical_meta SET pruned_through = (SELECT max(id) FROM gone)`);
    await expectRebuiltFromRecords();
  });

  it('is not used when a part does not match its checksum, or is missing', async () => {
    expect(await saves(await loaded(true))).toBe(true);
    expect((await loaded(true)).loadedFrom).toBe('snapshot');
    await dataSource.query(
      `UPDATE kb_lexical_snapshot_parts
          SET bytes = overlay(bytes PLACING '\\xdeadbeef'::bytea FROM 3)
        WHERE part = (SELECT max(part) FROM kb_lexical_snapshot_parts)`,
    );
    await expectRebuiltFromRecords();

    expect(await saves(await loaded(true))).toBe(true);
    await dataSource.query(`DELETE FROM kb_lexical_snapshot_parts WHERE part = 1`);
    await expectRebuiltFromRecords();
  });

  it('is not used when its parts do not fit its layout, or it is of another format', async () => {
    expect(await saves(await loaded(true))).toBe(true);
    // Two parts swapped, each whole and matching its checksum: the layout does not fit.
    await dataSource.query(`
      UPDATE kb_lexical_snapshot_parts p
         SET bytes = o.bytes, crc = o.crc
        FROM kb_lexical_snapshot_parts o
       WHERE (p.part, o.part) IN ((0, 1), (1, 0))`);
    await expectRebuiltFromRecords();

    expect(await saves(await loaded(true))).toBe(true);
    await dataSource.query(`UPDATE kb_lexical_snapshot SET format = format + 1`);
    await expectRebuiltFromRecords();
  });

  it('is written by a replica that stops with changes it does not hold, within a bound', async () => {
    const kept = async () =>
      (
        await dataSource.query(
          `SELECT applied_id::text AS applied, documents FROM kb_lexical_snapshot`,
        )
      )[0] as { applied: string; documents: number };
    const stopping = replicaOf(true);
    await stopping.current();
    expect(await saves(stopping)).toBe(true);
    const before = await kept();

    // Changes, then stops: fewer than the default threshold (replayed at the next start
    // instead), or with no time to write them. The kept snapshot stays.
    await write([90, 91]);
    await stopping.refresh();
    const few = replicaOf(true);
    await few.current();
    await write([92]);
    await few.refresh();
    await few.close();
    expect(await kept()).toEqual(before);
    const late = replicaOf(true);
    await late.current();
    await late.close({ withinMs: 0, minChanges: 1 });
    expect(await kept()).toEqual(before);

    // A stop in time writes what it holds: the next start reads that and replays the rest.
    await stopping.close({ minChanges: 1 });
    const after = await kept();
    expect(BigInt(after.applied)).toBeGreaterThan(BigInt(before.applied));
    expect(after.documents).toBe(before.documents + 2);
    const restarted = await loaded(true);
    expect(restarted.loadedFrom).toBe('snapshot');
    expect((await restarted.current()).documentCount).toBe(before.documents + 3);
    // Once stopping, a replica no longer reads the change log.
    await write([93]);
    await stopping.refresh();
    expect((await stopping.current()).documentCount).toBe(before.documents + 2);
  });

  it("gives up at the stop's bound while another server's save holds the table", async () => {
    const kept = async () =>
      (await dataSource.query(`SELECT applied_id::text AS applied FROM kb_lexical_snapshot`))[0];
    const stopping = await loaded(true);
    await write([70]);
    await stopping.refresh();
    const before = await kept();
    // Another server writing its snapshot: the table is its own until it commits.
    const other = await db.client();
    await other.query(`BEGIN; LOCK TABLE kb_lexical_snapshot IN SHARE ROW EXCLUSIVE MODE`);
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      // Resolves while the other save still holds the table (waiting on it would hang here),
      // given up as a late save is (not failed).
      await stopping.close({ withinMs: 300, minChanges: 1 });
      expect(await kept()).toEqual(before);
      expect(warned.mock.calls).toEqual([['the snapshot at stop was given up after 300 ms']]);
    } finally {
      warned.mockRestore();
      await other.query('ROLLBACK');
    }
  });

  it("holds a stopping process's snapshot to the bound its configuration gives (agent-data mcp's)", async () => {
    const store = new LexicalStore(
      dataSource,
      { clusterRole: 'single', stopSnapshotWithinMs: 250 } as AppConfig,
      { lsa: () => false } as unknown as EmbeddingsChoice,
    );
    // Loaded from the records (no snapshot of this format kept): written at its stop.
    await dataSource.query(`UPDATE kb_lexical_snapshot SET format = format + 1`);
    await store['replica'].current();
    expect(store['replica'].loadedFrom).toBe('records');
    const other = await db.client();
    await other.query(`BEGIN; LOCK TABLE kb_lexical_snapshot IN SHARE ROW EXCLUSIVE MODE`);
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      await store.beforeApplicationShutdown();
      expect(warned.mock.calls).toEqual([['the snapshot at stop was given up after 250 ms']]);
    } finally {
      warned.mockRestore();
      await other.query('ROLLBACK');
    }
  });

  it("is written at a stop while a new model's vectors are computed", async () => {
    // More documents than the computation does in one turn of the event loop.
    await write(Array.from({ length: 560 }, (_, n) => 1000 + n));
    const stopping = await loaded(true);
    const index = await stopping.current();
    const sample = [...index.documents()].map(({ documentId }) => index.termCountsOf(documentId)!);
    void stopping.useModel(trainLsa(sample, { dimensions: 4, seed: 5 }));
    // Stopped while the vectors are being computed (they yield after their first turn).
    await stopping.close({ minChanges: 1 });
    const [kept] = await dataSource.query(`SELECT documents FROM kb_lexical_snapshot`);
    expect(kept.documents).toBe(index.documentCount);
    const restarted = await loaded(true);
    expect(restarted.loadedFrom).toBe('snapshot');
  });

  it('is not replaced by a snapshot of an earlier position', async () => {
    const earlier = await loaded(true);
    await write([80]);
    const later = await loaded(true);
    expect(await saves(later)).toBe(true);
    // The earlier replica's index changed (a write of its own) but it has not read the log
    // since the later one's snapshot: its snapshot would be older.
    earlier.remove(['topic0/doc-0.md']);
    expect(await earlier.saveSnapshot(true)).toBe(false);
    expect((await loaded(true)).stats.documents).toBe((await later.current()).documentCount);
  });
});
