import { randomBytes } from 'node:crypto';
import { QdrantLexicalIndex } from '../src/vectors/stores/qdrant/qdrant-lexical.index';
import { QdrantVectorStore } from '../src/vectors/stores/qdrant/qdrant.vector-store';
import { deleteCollection } from './support/qdrant-rest';
import { describeWithQdrant, testQdrantUrl } from './support/qdrant';
import { type RelayedConnection, TcpRelay } from './support/tcp-relay';
import { waitFor } from './support/wait';

/** Unit vector from plain numbers (8 dimensions here). */
function v(...values: number[]): Float32Array {
  const padded = [...values, ...Array(8 - values.length).fill(0)];
  const norm = Math.hypot(...padded);
  return Float32Array.from(padded.map((x) => x / norm));
}

interface Answer {
  readonly head: string;
  /** How many reads of the socket the answer took. */
  readonly reads: number;
  /** Whether the first read held the whole answer (headers and body). */
  readonly wholeInFirstRead: boolean;
}

/**
 * The answers on one connection: a read that starts a status line starts an answer (one
 * request at a time on a connection, so no read holds the end of one and the start of another).
 */
function answers(connection: RelayedConnection): Answer[] {
  const found: Answer[] = [];
  let current: { first: Buffer; reads: number } | undefined;
  const close = () => {
    if (!current) return;
    const text = current.first.toString('latin1');
    const end = text.indexOf('\r\n\r\n');
    const head = end < 0 ? text : text.slice(0, end);
    const length = /^content-length: *(\d+)$/im.exec(head)?.[1];
    found.push({
      head,
      reads: current.reads,
      wholeInFirstRead:
        end >= 0 && length !== undefined && current.first.length === end + 4 + Number(length),
    });
  };
  for (const read of connection.reads) {
    if (read.subarray(0, 9).toString('latin1') === 'HTTP/1.1 ') {
      close();
      current = { first: read, reads: 1 };
    } else if (current) {
      current.reads++;
    }
  }
  close();
  return found;
}

/** The header lines of each request sent on one connection. */
function requestHeads(connection: RelayedConnection): string[] {
  // A body runs into the next request line (JSON has no line end): not anchored to a line.
  const text = Buffer.concat(connection.sent).toString('latin1');
  return [
    ...text.matchAll(/(?:GET|POST|PUT|PATCH|DELETE) \/\S* HTTP\/1\.1\r\n([\s\S]*?)\r\n\r\n/g),
  ].map((m) => m[1]);
}

/**
 * How the server's Qdrant client talks to Qdrant on the wire, seen through a TCP relay in
 * front of the run's real node. Asked for gzip, Qdrant streams an answer: its headers in one
 * write, the compressed body in a later one, on a socket with Nagle's algorithm on, so the body
 * waits for our acknowledgement of the headers, which Linux delays up to 40 ms
 * (docs/performance.md, "Going past one pod"). The client asks for answers uncompressed, which
 * Qdrant sends with their length, whole, in one write: each arrives in one read here.
 */
describeWithQdrant('the Qdrant client on the wire', 'server')(
  'the Qdrant client on the wire',
  () => {
    const url = testQdrantUrl()!;
    const collection = `wire_${randomBytes(4).toString('hex')}`;
    let relay: TcpRelay;
    /** The test's collection in the shared layout, through `through` (a relay to the node). */
    const sharedStore = async (through: string) => {
      const store = QdrantVectorStore.open({
        url: through,
        apiKey: process.env.QDRANT_URL ? process.env.QDRANT_API_KEY : undefined,
        collection,
        checkCompatibility: false,
        layout: 'shared',
      });
      await store.init({ id: 'local:test', dimensions: 8 });
      return store;
    };

    beforeAll(async () => {
      relay = await TcpRelay.to(url).start();
    });
    afterAll(async () => {
      await relay?.close();
      await deleteCollection(url, collection);
    });

    it('asks for answers uncompressed, and each write, search and batch query comes back whole in one read', async () => {
      const store = await sharedStore(relay.url);
      await store.replaceDocuments(
        Array.from({ length: 6 }, (_, i) => ({
          documentId: `wire/${i}.md`,
          revision: 1,
          title: `Doc ${i}`,
          tags: [],
          chunks: [0, 1].map((chunkIndex) => ({
            chunkIndex,
            vector: v(1, i, chunkIndex),
            heading: 'H',
            content: `passage ${chunkIndex} of document ${i} `.repeat(20),
          })),
        })),
      );
      const lexical = new QdrantLexicalIndex(store.collection, store.searchClient);
      for (let i = 0; i < 4; i++) {
        await store.search(v(1, i), { limit: 3 });
        // The search a server makes in qdrant mode: both sides in one batch query.
        const found = await lexical.search({
          lexical: { indices: [1, 2, 3], values: [1, 1, 1] },
          vector: { kind: 'dense', vector: v(1, i) },
          limit: 3,
          scope: {},
        });
        expect(found.vector?.map((hit) => hit.documentId)).toHaveLength(3);
      }

      const heads = relay.connections.flatMap(requestHeads);
      const got = relay.connections.flatMap(answers);
      // The collection's making, the writes, and eight searches: every one relayed and seen.
      expect(got.length).toBe(heads.length);
      expect(got.length).toBeGreaterThanOrEqual(10);
      for (const head of heads) expect(head).toMatch(/^accept-encoding: identity$/im);
      for (const answer of got) {
        expect(answer.head).toMatch(/^HTTP\/1\.1 200 /);
        expect(answer.head).not.toMatch(/^(content-encoding|transfer-encoding):/im);
        expect(answer).toMatchObject({ reads: 1, wholeInFirstRead: true });
      }
    });

    it('searches again on a new connection when its request crosses Qdrant closing an idle one', async () => {
      // Qdrant closes a connection idle for about 5 s; the client keeps idle ones 10 s. The
      // relay holds Qdrant's close until the client sends on that connection, then resets it
      // unanswered: what happens when a request leaves just as Qdrant closes its connection.
      const crossing = await TcpRelay.to(url, { holdCloses: true }).start();
      try {
        const store = await sharedStore(crossing.url);
        const lexical = new QdrantLexicalIndex(store.collection, store.searchClient);
        expect((await store.search(v(1, 2), { limit: 2 })).length).toBe(2);
        await waitFor(
          async () => crossing.connections.every((c) => c.closedByServer),
          'Qdrant to close the idle connections',
          { timeoutMs: 30_000, intervalMs: 100 },
        );
        const opened = crossing.connections.length;

        expect((await store.search(v(1, 3), { limit: 2 })).map((hit) => hit.documentId)).toEqual(
          expect.arrayContaining(['wire/3.md']),
        );
        await waitFor(
          async () => crossing.connections.every((c) => c.closedByServer),
          'Qdrant to close the idle connections',
          { timeoutMs: 30_000, intervalMs: 100 },
        );
        const found = await lexical.search({
          lexical: { indices: [1, 2, 3], values: [1, 1, 1] },
          vector: { kind: 'dense', vector: v(1, 4) },
          limit: 2,
          scope: {},
        });
        expect(found.vector).toHaveLength(2);
        // Each search went out on a held connection first (reset), then on a new one.
        expect(crossing.connections.length).toBe(opened + 2);
      } finally {
        await crossing.close();
      }
    });
  },
);
