import type { Client } from 'pg';
import request from 'supertest';
import { startTestApp, TestApp } from './support/app';
import { qdrantRequest, waitForActiveReplicas } from './support/qdrant-rest';
import { describeWithQdrant, QdrantCluster } from './support/qdrant';
import { waitFor } from './support/wait';

const COLLECTION = 'kb_lexical_cluster';
const SHARDS = 3;
const REPLICATION_FACTOR = 2;
const ANIMALS = ['pelican', 'ostrich', 'axolotl', 'capybara', 'narwhal', 'pangolin', 'okapi'];

/**
 * Both sides of search on a three-node Qdrant cluster (LEXICAL_STORE=qdrant): the server makes
 * its collection with QDRANT_SHARDS, QDRANT_REPLICATION_FACTOR, QDRANT_WRITE_CONSISTENCY and QDRANT_SEGMENTS;
 * one node SIGKILLed while an agent searches and writes: every search answers, every write
 * acknowledged reaches Qdrant once the pipeline drains, and the node back, its replicas become
 * Active again.
 */
describeWithQdrant('the Qdrant cluster tests', 'binary')(
  'search on a three-node Qdrant cluster',
  () => {
    jest.setTimeout(240_000);
    let cluster: QdrantCluster;
    let t: TestApp;
    let sql: Client;

    beforeAll(async () => {
      cluster = await QdrantCluster.start(3);
      t = await startTestApp({
        VECTOR_SYNC_ENABLED: 'true',
        QDRANT_URL: cluster.urls[0],
        QDRANT_COLLECTION: COLLECTION,
        LEXICAL_STORE: 'qdrant',
        QDRANT_SHARDS: String(SHARDS),
        QDRANT_REPLICATION_FACTOR: String(REPLICATION_FACTOR),
        QDRANT_WRITE_CONSISTENCY: '1',
        QDRANT_SEGMENTS: '3',
        VECTOR_RETRY_BASE_MS: '50',
      });
      sql = await t.db.client();
    }, 180_000);
    afterAll(async () => {
      await t?.close();
      await cluster?.destroy();
    });

    const body = (animal: string, i: number) =>
      `# ${animal} ${i}\n\nNotes on the ${animal}: where ${animal}s live and what they eat (${i}).`;
    const write = (id: string, text: string) =>
      request(t.baseUrl).post('/documents').send({ document_id: id, body: text }).expect(201);
    const pending = async () =>
      (
        await sql.query(
          `SELECT count(*)::int AS n FROM kb_documents
            WHERE deleted_at IS NULL AND vector_status NOT IN ('ready', 'skipped')`,
        )
      ).rows[0].n as number;

    it('makes its collection with the configured shards, replication, write consistency and segments', async () => {
      await write('zoo/first.md', body('pelican', 0));
      await waitFor(async () => (await pending()) === 0, 'the first document indexed', 90_000);
      const info = await qdrantRequest<{
        config: {
          params: {
            shard_number: number;
            replication_factor: number;
            write_consistency_factor: number;
          };
          optimizer_config: { default_segment_number: number };
        };
      }>(cluster.urls[2], 'GET', `/collections/${COLLECTION}`);
      expect(info.config.params).toMatchObject({
        shard_number: SHARDS,
        replication_factor: REPLICATION_FACTOR,
        write_consistency_factor: 1,
      });
      expect(info.config.optimizer_config.default_segment_number).toBe(3);
      const status = (await request(t.baseUrl).get('/admin/vectors/status').expect(200)).body;
      expect(status.store.collection).toMatchObject({
        name: COLLECTION,
        layout: 'shared',
        shards: SHARDS,
        replication_factor: REPLICATION_FACTOR,
        write_consistency: 1,
        segments: 3,
      });
    });

    it('answers every search and keeps every acknowledged write with a node SIGKILLed, and heals when it is back', async () => {
      const written: string[] = [];
      const answers = new Map<number, number>();
      let searching = true;
      // An agent searching all along, in turn by its words and in hybrid mode.
      const searcher = (async () => {
        for (let i = 0; searching; i++) {
          const answer = await request(t.baseUrl)
            .get('/search')
            .query({
              query: `${ANIMALS[i % ANIMALS.length]} live`,
              mode: i % 2 ? 'lexical' : 'hybrid',
            });
          answers.set(answer.status, (answers.get(answer.status) ?? 0) + 1);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      try {
        for (let i = 0; i < 30; i++) {
          const id = `zoo/${ANIMALS[i % ANIMALS.length]}-${i}.md`;
          await write(id, body(ANIMALS[i % ANIMALS.length], i));
          written.push(id);
          if (i === 10) await cluster.nodes[2].kill();
        }
        await waitFor(async () => (await pending()) === 0, 'the pipeline to drain', {
          timeoutMs: 120_000,
          intervalMs: 200,
        });
      } finally {
        searching = false;
        await searcher;
      }
      // Every search answered, none failed.
      expect([...answers.keys()]).toEqual([200]);
      expect(answers.get(200)).toBeGreaterThan(10);
      // Every acknowledged write is in Qdrant: found by its own words.
      for (const [i, id] of written.entries()) {
        const found = await request(t.baseUrl)
          .get('/search')
          .query({ query: `${ANIMALS[i % ANIMALS.length]} ${i}`, mode: 'lexical', limit: '50' })
          .expect(200);
        expect(found.body.results.map((r: { document_id: string }) => r.document_id)).toContain(id);
      }

      await cluster.nodes[2].start();
      for (const url of cluster.urls) {
        await waitForActiveReplicas(url, COLLECTION, SHARDS * REPLICATION_FACTOR);
      }
      const count = async (url: string) =>
        (
          await qdrantRequest<{ count: number }>(
            url,
            'POST',
            `/collections/${COLLECTION}/points/count`,
            {
              exact: true,
              filter: { must: [{ key: 'kind', match: { value: 'document' } }] },
            },
          )
        ).count;
      // Every node answers for every document's point, those it missed included.
      for (const url of cluster.urls) expect(await count(url)).toBe(written.length + 1);
    });
  },
);
