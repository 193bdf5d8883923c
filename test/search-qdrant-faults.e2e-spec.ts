import { createServer, Server, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Client } from 'pg';
import request from 'supertest';
import { lexicalRecord } from '../src/vectors/lexical/lexical-record';
import { queryVector } from '../src/vectors/stores/qdrant/lexical-vectors';
import { QdrantLexicalIndex } from '../src/vectors/stores/qdrant/qdrant-lexical.index';
import { QdrantVectorStore } from '../src/vectors/stores/qdrant/qdrant.vector-store';
import { startTestApp, TestApp } from './support/app';
import { describeWithQdrant, QdrantNode } from './support/qdrant';
import { waitFor } from './support/wait';

/**
 * A TCP relay to a Qdrant node that can hold its answers back: what a Qdrant that has become
 * slow looks like to the server (the node itself cannot be made slow on demand).
 */
class SlowRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  /** Milliseconds every chunk from Qdrant is held before it is passed on. */
  delayMs = 0;

  constructor(private readonly target: URL) {}

  async start(): Promise<string> {
    this.server = createServer((client) => {
      const upstream = new Socket();
      this.sockets.add(client).add(upstream);
      upstream.connect(Number(this.target.port), this.target.hostname);
      client.on('data', (chunk) => upstream.write(chunk));
      upstream.on('data', (chunk) => {
        const pass = () => {
          if (!client.destroyed) client.write(chunk);
        };
        if (this.delayMs > 0) setTimeout(pass, this.delayMs).unref();
        else pass();
      });
      const end = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/**
 * Qdrant failing under the lexical side in Qdrant (LEXICAL_STORE=qdrant), on a node of the
 * suite's own: wholly down (documents are read and written as ever, search answers 503 with
 * Retry-After and names nothing internal, the pipeline waits and resumes with nothing lost),
 * and slow (a search is given up after QDRANT_SEARCH_TIMEOUT_MS with a 503; nothing piles up).
 */
describeWithQdrant('the Qdrant fault tests', 'binary')('search when Qdrant fails', () => {
  jest.setTimeout(180_000);
  let node: QdrantNode;
  let relay: SlowRelay;
  let t: TestApp;
  let sql: Client;

  beforeAll(async () => {
    node = await QdrantNode.start();
    relay = new SlowRelay(new URL(node.url));
    t = await startTestApp({
      VECTOR_SYNC_ENABLED: 'true',
      QDRANT_URL: await relay.start(),
      QDRANT_COLLECTION: 'kb_faults',
      LEXICAL_STORE: 'qdrant',
      QDRANT_SEARCH_TIMEOUT_MS: '500',
      QDRANT_TIMEOUT_MS: '2000',
      VECTOR_RETRY_BASE_MS: '50',
    });
    sql = await t.db.client();
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await relay?.close();
    await node?.destroy();
  });

  const write = (id: string, body: string) =>
    request(t.baseUrl).post('/documents').send({ document_id: id, body }).expect(201);
  const status = async (id: string) =>
    (
      await sql.query(
        `SELECT vector_status, vector_attempts FROM kb_documents WHERE document_id = $1`,
        [id],
      )
    ).rows[0] as { vector_status: string; vector_attempts: number };
  const found = async (query: string) =>
    (
      await request(t.baseUrl).get('/search').query({ query, mode: 'lexical' }).expect(200)
    ).body.results.map((r: { document_id: string }) => r.document_id) as string[];

  it('answers 503 with Retry-After while Qdrant is down, keeps documents working, and loses nothing', async () => {
    await write('faults/before.md', '# Before\n\nThe wombat burrows at dusk.');
    await waitFor(
      async () => (await status('faults/before.md')).vector_status === 'ready',
      'a first document indexed',
    );
    expect(await found('wombat')).toEqual(['faults/before.md']);

    await node.kill();
    for (const mode of ['hybrid', 'lexical', 'vector']) {
      const answer = await request(t.baseUrl).get('/search').query({ query: 'wombat', mode });
      expect({ mode, status: answer.status }).toEqual({ mode, status: 503 });
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
      expect(answer.body.error.code).toBe('UNAVAILABLE');
      // No address, port or stack.
      expect(JSON.stringify(answer.body)).not.toMatch(/127\.0\.0\.1|:\d{4,5}\b|\bat \w+ \(/);
    }
    // Documents are read and written as ever: PostgreSQL holds them.
    await request(t.baseUrl).get('/documents/faults/before.md').expect(200);
    const during = Array.from({ length: 5 }, (_, i) => `faults/during-${i}.md`);
    for (const id of during) await write(id, `# During\n\nThe numbat ${id} forages for termites.`);
    // The pipeline gives them back and waits for the store, counting no attempt.
    await waitFor(async () => {
      const state = (await request(t.baseUrl).get('/admin/vectors/status').expect(200)).body;
      return state.worker.waiting_for_store === true;
    }, 'the pipeline to wait for Qdrant');
    // A batch still in flight when the wait began holds its documents (claimed, the attempt
    // counted until it gives them back): read them once no batch does.
    await waitFor(async () => {
      const { rows } = await sql.query(
        `SELECT count(*)::int AS leased FROM kb_documents
          WHERE document_id = ANY($1) AND vector_lease_id IS NOT NULL`,
        [during],
      );
      return rows[0].leased === 0;
    }, 'the batches that held them to give them back');
    for (const id of during) {
      const row = await status(id);
      expect({ id, status: row.vector_status }).toEqual({ id, status: 'pending' });
      expect(row.vector_attempts).toBe(0);
    }

    await node.start();
    await waitFor(
      async () => {
        for (const id of during) if ((await status(id)).vector_status !== 'ready') return false;
        return true;
      },
      'every document written while Qdrant was down to be indexed once it is back',
      { timeoutMs: 90_000, intervalMs: 200 },
    );
    expect((await found('numbat')).sort()).toEqual([...during].sort());
    expect(await found('wombat')).toEqual(['faults/before.md']);
  });

  it('gives a slow Qdrant up after QDRANT_SEARCH_TIMEOUT_MS with a 503, every search answered', async () => {
    await waitFor(async () => (await found('wombat')).length === 1, 'search to answer again');
    relay.delayMs = 5_000;
    try {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          request(t.baseUrl).get('/search').query({ query: 'wombat', mode: 'lexical' }),
        ),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.body.error.message).toMatch(/^Qdrant search failed: no answer in time/);
        expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
      }
      // Documents are not held up by it.
      await request(t.baseUrl).get('/documents/faults/before.md').expect(200);
    } finally {
      relay.delayMs = 0;
    }
    await waitFor(async () => (await found('wombat')).length === 1, 'search to answer again');
  });
});

/**
 * Large documents' lexical points reach a Qdrant that takes requests of a few MB: a batch's
 * points go in requests of bounded size (ten documents of 12 000 distinct terms each, some
 * 1.8 MB of sparse vectors as JSON, are refused by this node in one request).
 */
describeWithQdrant('the Qdrant fault tests', 'binary')(
  'large documents into a Qdrant that takes requests of 1 MB at most',
  () => {
    let node: QdrantNode;
    beforeAll(async () => {
      node = await QdrantNode.start({ settings: { QDRANT__SERVICE__MAX_REQUEST_SIZE_MB: '1' } });
    }, 120_000);
    afterAll(() => node?.destroy());

    it('writes the points of a batch whose terms exceed one request, and finds each document', async () => {
      // Distinct made-up words, as a large log or a generated reference would hold. Analysed
      // before the store is opened: seconds of analysis on a busy machine after its first
      // requests would leave their connection idle past Qdrant's keep-alive (5 s), and an
      // upsert sent as it closes fails, as a write is not asked twice (qdrant-connection.ts).
      const word = (d: number, i: number) => `w${d}x${(i * 7919 + d * 104729).toString(36)}`;
      const documents = Array.from({ length: 10 }, (_, d) => {
        const content = Array.from({ length: 12_000 }, (_, i) => word(d, i)).join(' ');
        return {
          documentId: `large/doc-${d}.md`,
          revision: 1,
          tags: [],
          passages: [],
          record: lexicalRecord(`Large ${d}`, content, [{ headings: [], content }]),
        };
      });
      const averages = { title: 2, headings: 1, body: 12_000, anchor: 1, passage: 12_000 };
      const store = QdrantVectorStore.open({
        url: node.url,
        collection: 'kb_large',
        layout: 'shared',
        checkCompatibility: false,
      });
      await store.init({ id: 'local:test', dimensions: 8 });
      const index = new QdrantLexicalIndex(store.collection, store.searchClient);
      // No semantic model: the transaction is not needed.
      await index.mirror(undefined as never, documents, [], averages);
      for (const d of [0, 9]) {
        const found = await index.search({
          lexical: queryVector([{ term: word(d, 1234), weight: 1 }]),
          limit: 5,
          scope: {},
        });
        expect(found.lexical?.map((hit) => hit.documentId)).toEqual([`large/doc-${d}.md`]);
      }
    });
  },
);
