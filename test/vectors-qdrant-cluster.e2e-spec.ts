import { Client } from 'pg';
import request from 'supertest';
import { LOCAL_DEFAULT_DIMENSIONS } from '../src/vectors/embedders/local.embedder';
import { startTestApp, TestApp } from './support/app';
import {
  createCollection,
  qdrantRequest,
  replicas,
  waitForActiveReplicas,
} from './support/qdrant-rest';
import { describeWithQdrant, QdrantCluster } from './support/qdrant';
import { waitFor } from './support/wait';

/** Each animal's document says something no other does: a vector search finds it first. */
const ANIMALS = ['pelican', 'ostrich', 'axolotl', 'capybara', 'narwhal', 'pangolin'];
const body = (animal: string) =>
  `# ${animal}\n\nThe ${animal} ${animal}s are described here: where ${animal}s live and what ${animal}s eat.`;
const COLLECTION = 'kb_cluster';
/** Three shards, each on two of the three nodes: any one node may go. */
const SHARDS = 3;
const REPLICATION_FACTOR = 2;

/**
 * The server's Qdrant store on a three-node Qdrant cluster (distributed mode, on loopback),
 * with a collection made ahead with three shards of two replicas each (the store uses an
 * existing collection as it is). Documents written through the app are found by vector search;
 * with one node SIGKILLed, search still answers through the node the app talks to and writes
 * still land; started again, the node's replicas come back to Active with what it missed.
 */
describeWithQdrant('the Qdrant cluster tests', 'binary')(
  'the vector store on a three-node Qdrant cluster',
  () => {
    jest.setTimeout(120_000);
    let cluster: QdrantCluster;
    let t: TestApp;
    let sql: Client;

    beforeAll(async () => {
      cluster = await QdrantCluster.start(3);
      await createCollection(cluster.urls[0], COLLECTION, {
        dimensions: LOCAL_DEFAULT_DIMENSIONS,
        shards: SHARDS,
        replicationFactor: REPLICATION_FACTOR,
      });
      t = await startTestApp({
        VECTOR_SYNC_ENABLED: 'true',
        VECTOR_STORE: 'qdrant',
        QDRANT_URL: cluster.urls[0],
        QDRANT_COLLECTION: COLLECTION,
        VECTOR_RETRY_BASE_MS: '50',
      });
      sql = await t.db.client();
    }, 180_000);
    afterAll(async () => {
      await t?.close();
      await cluster?.destroy();
    });

    const write = (animal: string) =>
      request(t.baseUrl)
        .post('/documents')
        .send({ document_id: `zoo/${animal}.md`, body: body(animal) })
        .expect(201);
    /** Waits until the pipeline has written the document's points to Qdrant. */
    const embedded = (animal: string) =>
      waitFor(async () => {
        const { rows } = await sql.query(
          `SELECT vector_status, vector_error FROM kb_documents WHERE document_id = $1`,
          [`zoo/${animal}.md`],
        );
        if (rows[0]?.vector_status === 'error') {
          throw new Error(`zoo/${animal}.md failed to embed: ${rows[0].vector_error}`);
        }
        return rows[0]?.vector_status === 'ready';
      }, `zoo/${animal}.md to be embedded`);
    const byVector = async (query: string, limit = 10) =>
      (
        await request(t.baseUrl)
          .get('/search')
          .query({ query, mode: 'vector', limit: String(limit) })
          .expect(200)
      ).body.results.map((r: { document_id: string }) => r.document_id) as string[];
    const count = async (url: string) =>
      (
        await qdrantRequest<{ count: number }>(
          url,
          'POST',
          `/collections/${COLLECTION}/points/count`,
          {
            exact: true,
          },
        )
      ).count;

    it('writes documents through the app into the replicated collection, and finds each by vector', async () => {
      for (const animal of ANIMALS.slice(0, 5)) await write(animal);
      for (const animal of ANIMALS.slice(0, 5)) await embedded(animal);

      for (const animal of ANIMALS.slice(0, 5)) {
        expect((await byVector(`where do ${animal}s live`))[0]).toBe(`zoo/${animal}.md`);
      }
      // The store kept the collection as it was made, and every node answers for all of it.
      const info = await qdrantRequest<{
        config: { params: { shard_number: number; replication_factor: number } };
      }>(cluster.urls[1], 'GET', `/collections/${COLLECTION}`);
      expect(info.config.params).toMatchObject({
        shard_number: SHARDS,
        replication_factor: REPLICATION_FACTOR,
      });
      for (const url of cluster.urls) expect(await count(url)).toBe(5);
    });

    it('answers through a surviving node with one node SIGKILLed, takes writes, and heals when it is back', async () => {
      const down = cluster.nodes[2];
      const { peer_id: downPeer } = await qdrantRequest<{ peer_id: number }>(
        down.url,
        'GET',
        '/cluster',
      );
      await down.kill();

      const five = ANIMALS.slice(0, 5).map((a) => `zoo/${a}.md`);
      expect((await byVector('where do animals live')).sort()).toEqual([...five].sort());
      for (const animal of ANIMALS.slice(0, 5)) {
        expect((await byVector(`what do ${animal}s eat`))[0]).toBe(`zoo/${animal}.md`);
      }
      // A long document while the node is down: its points fall in every shard, so the down
      // node's replicas miss writes (and are marked Dead by the nodes that made them).
      const last = ANIMALS[5];
      const sections = Array.from(
        { length: 24 },
        (_, i) =>
          `## Part ${i}\n\n${`Fact ${i}: ${last}s eat ants and live in burrows. `.repeat(40)}`,
      );
      await request(t.baseUrl)
        .post('/documents')
        .send({ document_id: `zoo/${last}.md`, body: `# ${last}\n\n${sections.join('\n\n')}` })
        .expect(201);
      await embedded(last);
      expect((await byVector(`what do ${last}s eat`))[0]).toBe(`zoo/${last}.md`);
      const points = await count(cluster.urls[1]);
      expect(points).toBeGreaterThan(5 + 20);
      // Marked through the cluster's consensus, a moment after the write that missed them.
      await waitFor(async () => {
        const missed = (await replicas(cluster.urls[0], COLLECTION)).filter(
          (r) => r.peerId === downPeer,
        );
        return missed.length === 2 && missed.every((r) => r.state === 'Dead');
      }, "the down node's two replicas to be marked Dead");

      await down.start();
      for (const url of cluster.urls) {
        await waitForActiveReplicas(url, COLLECTION, SHARDS * REPLICATION_FACTOR);
      }
      // Every replica of each shard holds the same points, the ones recovered included.
      const perShard = new Map<number, number[]>();
      for (const url of cluster.urls) {
        const info = await qdrantRequest<{
          local_shards: { shard_id: number; points_count: number }[];
        }>(url, 'GET', `/collections/${COLLECTION}/cluster`);
        for (const { shard_id, points_count } of info.local_shards) {
          perShard.set(shard_id, [...(perShard.get(shard_id) ?? []), points_count]);
        }
      }
      expect([...perShard.keys()].sort()).toEqual([0, 1, 2]);
      for (const [shard, counts] of perShard) {
        expect({ shard, counts }).toEqual({ shard, counts: [counts[0], counts[0]] });
      }
      expect([...perShard.values()].reduce((sum, [first]) => sum + first, 0)).toBe(points);
      expect(await count(down.url)).toBe(points);
    });
  },
);
