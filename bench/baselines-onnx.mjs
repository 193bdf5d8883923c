// The raw baseline of an embedding model (docs/performance.md): what ONNX Runtime itself gives
// on this machine, with nothing of the product around it. onnxruntime-node and
// @huggingface/tokenizers used directly, as their documentation shows (the session's default
// options but its intra-op threads), one text per run, over texts given in a file. The bench
// (scenarios/55-models.mjs) runs it in a process of its own over the very passages its
// pipeline embedded, and over the retrieval queries, and compares.
//
//   node bench/baselines-onnx.mjs --model model.onnx --tokenizer tokenizer.json
//        --pooling cls|mean --texts texts.json [--prefix 'query: '] [--max-tokens 512]
//        [--threads 1]
//
// Prints one line of JSON: texts, seconds, texts per second, the CPU time of the process
// over the run (and texts per CPU-second: what the machine's other load changes least),
// per-text p50/p95 in ms, the load time and the process's resident memory after the run.
import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import { summarize } from './lib.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  if (i !== -1) return args[i + 1];
  if (fallback === undefined) throw new Error(`--${name} is required`);
  return fallback;
};
const pooling = option('pooling');
const prefix = option('prefix', '');
const maxTokens = Number(option('max-tokens', '512'));
const threads = Number(option('threads', '1'));
const texts = JSON.parse(readFileSync(option('texts'), 'utf8'));

const loading = performance.now();
const tokenizer = new Tokenizer(JSON.parse(readFileSync(option('tokenizer'), 'utf8')), {});
const session = await ort.InferenceSession.create(option('model'), {
  intraOpNumThreads: threads,
});
const loadMs = performance.now() - loading;

/** The unit vector of one text: its tokens cut to the window (closing token kept), one run. */
async function embed(text) {
  let ids = tokenizer.encode(prefix + text).ids;
  if (ids.length > maxTokens) ids = [...ids.slice(0, maxTokens - 1), ids[ids.length - 1]];
  const shape = [1, ids.length];
  const feeds = {
    input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), shape),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), shape),
  };
  if (session.inputNames.includes('token_type_ids'))
    feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(ids.length), shape);
  const output = (await session.run(feeds))[session.outputNames[0]];
  const [, length, width] = output.dims;
  const states = output.data;
  const vector = new Float32Array(width);
  // The first token's state, or the sum of all (the mean's direction: it is normalised next).
  for (let t = 0; t < (pooling === 'cls' ? 1 : length); t++)
    for (let d = 0; d < width; d++) vector[d] += states[t * width + d];
  let norm = 0;
  for (let d = 0; d < width; d++) norm += vector[d] * vector[d];
  norm = Math.sqrt(norm) || 1;
  for (let d = 0; d < width; d++) vector[d] /= norm;
  return vector;
}

await embed('warm up'); // the first run allocates what the next ones reuse
const each = [];
const cpu = process.cpuUsage();
const started = performance.now();
for (const text of texts) {
  const t0 = performance.now();
  await embed(text);
  each.push(performance.now() - t0);
}
const seconds = (performance.now() - started) / 1000;
const { user, system } = process.cpuUsage(cpu);
const cpuSeconds = (user + system) / 1e6;
const { p50, p95 } = summarize(each);
process.stdout.write(
  `${JSON.stringify({
    texts: texts.length,
    seconds: Math.round(seconds * 100) / 100,
    perSecond: Math.round((texts.length / seconds) * 100) / 100,
    cpuSeconds: Math.round(cpuSeconds * 100) / 100,
    perCpuSecond: Math.round((texts.length / cpuSeconds) * 100) / 100,
    p50,
    p95,
    threads,
    loadMs: Math.round(loadMs),
    rssMb: Math.round(process.memoryUsage().rss / 1024 / 1024),
  })}\n`,
);
