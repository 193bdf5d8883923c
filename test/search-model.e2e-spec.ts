import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp } from '../src/app.factory';
import { loadConfig } from '../src/config/load-config';
import { knownModel } from '../src/models/known-models';
import { installModel, MODEL_FILE, TOKENIZER_FILE } from '../src/models/model-store';
import { ModelThreads } from '../src/vectors/embedders/model-threads';
import { startTestApp, TestApp } from './support/app';
import { createTestDatabase } from './support/database';
import { describeWithModels, JARS, unpackJar } from './support/test-models';
import { waitFor } from './support/wait';

/**
 * Search with a real embedding model run in the server (docs/search.md): bge-small-en-v1.5
 * from langchain4j's Maven jar (tools/models/obtain-test-models.sh), installed under a
 * MODELS_DIR of the test's own. A question written in other words than its document finds it
 * first, in hybrid and vector mode, where the lexical side alone does not.
 */
describeWithModels('search with an embedding model')('search with an embedding model', () => {
  let dir: string;
  let modelsDir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-data-model-search-'));
    modelsDir = join(dir, 'models');
    const files = await unpackJar(JARS.bge, dir);
    await installModel(modelsDir, knownModel('bge-small-en-v1.5')!, files, JARS.bge);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe.each([
    ['bge-small-en-v1.5', 'bge'],
    ['all-MiniLM-L6-v2', 'minilm'],
  ] as const)('%s against an independent implementation', (name, jar) => {
    let threads: ModelThreads;
    beforeAll(async () => {
      const own = mkdtempSync(join(dir, `${jar}-`));
      const files = await unpackJar(JARS[jar], own);
      threads = new ModelThreads({ model: name, files }, { passageThreads: 1 });
    });
    afterAll(() => threads.close());

    // The files are 8-bit: each run quantizes its activations by their range, and two builds of
    // ONNX Runtime (Python 1.32 made the reference, the server runs Node's 1.30) may round one of
    // them apart, which moves that text's vector by up to some 1.5e-3 cosine (measured: 4 texts of
    // 20; the others agree to 1e-6). A mistake in pooling, prefix or window moves it by more than
    // 7e-3 (a bge passage embedded with the query prefix: 0.9926 at best), so each text must be
    // within 3e-3 and most of them exact.
    it('gives the reference vectors (pooling, prefixes, window)', async () => {
      const reference = JSON.parse(
        readFileSync(join(__dirname, 'fixtures', 'models', `${name}.reference.json`), 'utf8'),
      ) as { texts: Array<{ kind: 'query' | 'passage'; text: string; vector: number[] }> };
      const apart: Array<{ text: string; cosine: number }> = [];
      let exact = 0;
      for (const { kind, text, vector } of reference.texts) {
        const ours = await threads.embed([text], kind);
        const cosine = vector.reduce((sum, x, d) => sum + x * ours[d], 0);
        if (Math.abs(1 - cosine) < 1e-5) exact += 1;
        else if (Math.abs(1 - cosine) > 3e-3) apart.push({ text: text.slice(0, 40), cosine });
      }
      expect(apart).toEqual([]);
      expect(exact).toBeGreaterThan(reference.texts.length / 2);
    });
  });

  describe('the model threads', () => {
    let threads: ModelThreads;
    beforeAll(() => {
      const model = join(modelsDir, 'bge-small-en-v1.5');
      threads = new ModelThreads(
        {
          model: 'bge-small-en-v1.5',
          files: { model: join(model, MODEL_FILE), tokenizer: join(model, TOKENIZER_FILE) },
        },
        { passageThreads: 1 },
      );
    });
    afterAll(() => threads.close());

    const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);
    const unit = (v: Float32Array) => Math.abs(Math.hypot(...v) - 1) < 1e-4;

    it('embed queries and passages so that each query meets its own passage', async () => {
      const passages = [
        'A nightly pg_dump is copied to object storage; pg_restore brings it back into an empty database.',
        'Employees take up to 25 days of paid vacation a year, booked with their manager.',
        'The cat sleeps on the warm windowsill all afternoon.',
      ];
      const queries = [
        'how do I recover lost data',
        'how much time off do workers get annually',
        'where does the pet nap',
      ];
      const p = await threads.embed(passages, 'passage');
      const q = await threads.embed(queries, 'query');
      const at = (flat: Float32Array, i: number) => flat.subarray(i * 384, (i + 1) * 384);
      for (let i = 0; i < queries.length; i++) {
        const scores = passages.map((_, k) => cosine(at(q, i), at(p, k)));
        expect(scores.indexOf(Math.max(...scores))).toBe(i);
        expect(unit(at(q, i))).toBe(true);
      }
      // A query is embedded with the model's instruction: not as the same text as a passage.
      const asPassage = await threads.embed([queries[0]], 'passage');
      expect(cosine(asPassage, at(q, 0))).toBeLessThan(0.99);
    });

    it('embed an empty text and one far longer than the window (cut to it)', async () => {
      const long = 'restore the backup into an empty database. '.repeat(2000);
      const vectors = await threads.embed(['', long, `${long} and more`], 'passage');
      expect(vectors).toHaveLength(3 * 384);
      const at = (i: number) => vectors.subarray(i * 384, (i + 1) * 384);
      expect([0, 1, 2].every((i) => unit(at(i)))).toBe(true);
      // Past the window nothing counts: the two long texts are one text to the model.
      expect(cosine(at(1), at(2))).toBeCloseTo(1, 5);
    });
  });

  describe('a server that runs the model', () => {
    let t: TestApp;
    const documents: Record<string, string> = {
      'kb/ops/backups.md':
        '# Database backups\n\nA nightly pg_dump is copied to object storage. To bring it back, pg_restore it into an empty database.',
      'kb/hr/leave.md':
        '# Holidays\n\nEmployees take up to 25 days of paid vacation a year, booked with their manager.',
      'kb/ops/deploy.md':
        '# Deploying\n\nhelm upgrade rolls the release out; helm rollback returns to the previous one.',
      'kb/dev/tests.md':
        '# Running the test suite\n\nnpm test runs the unit and integration tests against PostgreSQL.',
      'kb/ops/oncall.md':
        '# On-call rota\n\nEach week one engineer answers the pager and writes the incident reports.',
      'kb/misc/cat.md': '# The office cat\n\nThe cat sleeps on the warm windowsill all afternoon.',
    };
    const search = async (query: string, mode: string) =>
      (await request(t.baseUrl).get('/search').query({ query, mode }).expect(200)).body as {
        results: Array<{ document_id: string; snippet: string }>;
        degraded?: boolean;
      };

    beforeAll(async () => {
      t = await startTestApp({ VECTOR_SYNC_ENABLED: 'true', MODELS_DIR: modelsDir });
      for (const [id, body] of Object.entries(documents)) {
        await request(t.baseUrl).post('/documents').send({ document_id: id, body }).expect(201);
      }
      await waitFor(
        async () =>
          (await request(t.baseUrl).get('/admin/vectors/status')).body.counts.ready ===
          Object.keys(documents).length,
        'every document to be embedded by the model',
        120_000,
      );
    });
    afterAll(() => t.close());

    it('says which embedder it runs and why', async () => {
      const { embedder } = (await request(t.baseUrl).get('/admin/vectors/status').expect(200)).body;
      expect(embedder).toMatchObject({
        provider: 'onnx',
        model: 'bge-small-en-v1.5',
        dimensions: 384,
        ok: true,
        state: 'ready',
        chosen: expect.stringContaining('the one model installed in'),
      });
    });

    it.each([
      ['how do I recover lost data', 'kb/ops/backups.md'],
      ['how much time off do workers get annually', 'kb/hr/leave.md'],
    ])(
      'finds "%s" first in other words, where the lexical side does not',
      async (question, target) => {
        const lexical = await search(question, 'lexical');
        expect(lexical.results[0]?.document_id).not.toBe(target);
        expect((await search(question, 'vector')).results[0].document_id).toBe(target);
        const hybrid = await search(question, 'hybrid');
        expect(hybrid.results[0].document_id).toBe(target);
        expect(hybrid.degraded).toBeUndefined();
      },
    );

    it('does not pad a page with neighbours that are not answers', async () => {
      const hybrid = await search('helm rollback', 'hybrid');
      expect(hybrid.results[0].document_id).toBe('kb/ops/deploy.md');
      // The cat shares nothing with the query: the vector side's nearest, not an answer.
      expect(hybrid.results.map((r) => r.document_id)).not.toContain('kb/misc/cat.md');
    });
  });

  it('finds a new document by its words at once, however many wait to be embedded', async () => {
    const t = await startTestApp({ VECTOR_SYNC_ENABLED: 'true', MODELS_DIR: modelsDir });
    try {
      // A backlog the model needs many seconds for (each document some passages).
      const paragraph = 'The pipeline embeds documents in the background while writes go on. ';
      const items = Array.from({ length: 60 }, (_, i) => ({
        op: 'create',
        document_id: `backlog/${i}.md`,
        body: `# Backlog ${i}\n\n${paragraph.repeat(60)}`,
      }));
      await request(t.baseUrl).post('/documents/bulk').send({ items }).expect(200);
      await request(t.baseUrl)
        .post('/documents')
        .send({ document_id: 'fresh/quokka.md', body: 'The quokkatron restarts at dawn.' })
        .expect(201);
      const found = await waitFor(
        async () => {
          const lexical = await request(t.baseUrl)
            .get('/search')
            .query({ query: 'quokkatron', mode: 'lexical' });
          return lexical.body.results?.[0]?.document_id === 'fresh/quokka.md' && lexical.body;
        },
        'the new document found by its words',
        15_000,
      );
      expect(found.results[0].snippet).toContain('**quokkatron**');
      // Found while the embedder was still working through the backlog.
      const status = (await request(t.baseUrl).get('/admin/vectors/status')).body;
      expect(status.counts.pending).toBeGreaterThan(10);
    } finally {
      await t.close();
    }
    // A server of its own, loading the model and closed while it embeds: 20–30 s on a slow host.
  }, 60_000);

  it('embeds everything again when the model changes, lexical search answering meanwhile', async () => {
    const db = await createTestDatabase();
    const empty = join(dir, 'no-models');
    try {
      const before = await startTestApp({ VECTOR_SYNC_ENABLED: 'true', MODELS_DIR: empty }, db);
      try {
        await request(before.baseUrl)
          .post('/documents')
          .send({ document_id: 'a/leave.md', body: 'Employees take 25 days of paid vacation.' })
          .expect(201);
        await waitFor(
          async () =>
            (await request(before.baseUrl).get('/admin/vectors/status')).body.counts.ready === 1,
          'the hashed vectors',
          // The first batch starts the chunking thread, niced: on a machine busy with other
          // suites it waits for the CPU (a full run once took over 20 s).
          40_000,
        );
      } finally {
        await before.close();
      }
      const after = await startTestApp({ VECTOR_SYNC_ENABLED: 'true', MODELS_DIR: modelsDir }, db);
      try {
        const lexical = await request(after.baseUrl)
          .get('/search')
          .query({ query: 'vacation', mode: 'lexical' })
          .expect(200);
        expect(lexical.body.results[0].document_id).toBe('a/leave.md');
        // The hashed vectors were dropped at start: the vector side finds it once the model
        // has embedded it again.
        await waitFor(
          async () => {
            const vector = await request(after.baseUrl)
              .get('/search')
              .query({ query: 'how much time off do workers get', mode: 'vector' })
              .expect(200);
            return vector.body.results[0]?.document_id === 'a/leave.md';
            // The model loads on its thread, then embeds: on a machine running other suites'
            // servers beside it, that took over 20 s (the test's own budget covers the wait).
          },
          'the document embedded again by the model',
          60_000,
        );
        const client = await db.client();
        const {
          rows: [{ embedder }],
        } = await client.query<{ embedder: string }>('SELECT embedder FROM kb_chunk_vector_meta');
        expect(embedder).toBe('onnx:bge-small-en-v1.5');
      } finally {
        await after.close();
      }
    } finally {
      await db.drop();
    }
    // Two starts, a model loaded and two waits of their own: its waits, not jest's, name what
    // did not come.
  }, 180_000);
});

describe('a named model that is not installed', () => {
  it('stops the start with one line naming the command that installs it', async () => {
    const modelsDir = mkdtempSync(join(tmpdir(), 'agent-data-no-model-'));
    const db = await createTestDatabase();
    try {
      const config = loadConfig({
        DATABASE_URL: db.url,
        MIGRATIONS_RUN: 'false',
        LOG_LEVEL: 'silent',
        MODELS_DIR: modelsDir,
        EMBEDDINGS_MODEL: 'bge-small-en-v1.5',
      });
      await expect(createApp(config)).rejects.toThrow(
        `the model bge-small-en-v1.5 is not installed in ${modelsDir}: run \`agent-data models pull bge-small-en-v1.5\`, or \`agent-data models add bge-small-en-v1.5 PATH\` with its files`,
      );
    } finally {
      await db.drop();
      rmSync(modelsDir, { recursive: true, force: true });
    }
  });
});
