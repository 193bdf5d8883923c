// Closed-loop load generator: `concurrency` keep-alive connections, each sending its next
// request as soon as the previous answer is complete. It speaks HTTP/1.1 on raw sockets
// (as wrk and autocannon do) because Node's http client costs more CPU per request than the
// server paths being measured, on the same two cores. Every request is timed with hrtime,
// so p95 is an exact nearest-rank percentile, not a histogram bucket.
import { getRandomPort } from 'get-port-please';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * @param {object} options
 * @param {string} options.baseUrl
 * @param {number} options.concurrency
 * @param {number} options.requests  requests that count (after warm-up)
 * @param {number} [options.warmup]  requests sent first and not counted (default: 20 × concurrency)
 * @param {(i: number) => {method?: string, path: string, headers?: object, body?: unknown}} options.request
 * @param {(status: number) => boolean} [options.ok]  which statuses count as success (default 2xx)
 */
export async function load({
  baseUrl,
  concurrency,
  requests,
  warmup = concurrency * 20,
  request,
  ok,
}) {
  const url = new URL(baseUrl);
  const isOk = ok ?? ((status) => status >= 200 && status < 300);
  const latencies = [];
  const statuses = {};
  let errors = 0;
  let next = 0;
  const total = warmup + requests;
  let started = 0n;

  const worker = async () => {
    let connection = await Connection.open(url);
    while (next < total) {
      const i = next++;
      if (i === warmup) started = process.hrtime.bigint();
      const wire = encode(url, request(i));
      const t0 = process.hrtime.bigint();
      let status;
      try {
        const answer = await connection.send(wire);
        status = answer.status;
        if (answer.close) {
          connection.destroy();
          connection = await Connection.open(url);
        }
      } catch {
        status = 0;
        connection.destroy();
        connection = await Connection.open(url);
      }
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (i < warmup) continue;
      latencies.push(ms);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (!isOk(status)) errors++;
    }
    connection.destroy();
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - (started || process.hrtime.bigint())) / 1e9;
  return { ...summarize(latencies), rps: round(latencies.length / seconds), errors, statuses };
}

/** p50/p95/p97.5/p99/max (ms) of a list of latencies, nearest-rank. */
export function summarize(latencies) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p) =>
    sorted.length === 0
      ? NaN
      : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  return {
    requests: sorted.length,
    p50: round(at(50)),
    p95: round(at(95)),
    p975: round(at(97.5)),
    p99: round(at(99)),
    max: round(sorted[sorted.length - 1]),
  };
}

/**
 * Starts a baseline server of bench/baselines.mjs (`http`, `pg` or `sdk`) in a process of its
 * own, with `env` added to ours; resolves once it listens.
 * @returns {Promise<{baseUrl: string, stop: () => Promise<void>}>}
 */
export function startBaseline(kind, env = {}) {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'baselines.mjs');
  const child = spawn(process.execPath, [script, kind], {
    env: { ...process.env, ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`baseline ${kind} exited with ${code}`)));
    child.stdout.on('data', (data) => {
      out += data;
      const port = /listening (\d+)/.exec(out)?.[1];
      if (port) resolve({ baseUrl: `http://127.0.0.1:${port}`, stop });
    });
  });
}

/** The id run.mjs gives the seeded document number `n`: `bench/dNNN/doc-NNNNN.md`, 100 per folder. */
export function seededId(n) {
  return `bench/d${String(Math.floor(n / 100)).padStart(3, '0')}/doc-${String(n).padStart(5, '0')}.md`;
}

/** `headers` plus what a 2025-era MCP client sends with a POST. */
export function mcpHeaders(headers) {
  return {
    ...headers,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2025-06-18',
  };
}

/** A JSON-RPC request. */
export function envelope(method, params, id) {
  return { jsonrpc: '2.0', id, method, params };
}

/** A `tools/call` request. */
export function toolCall(name, args, id) {
  return envelope('tools/call', { name, arguments: args }, id);
}

export function round(value) {
  return Math.round(value * 100) / 100;
}

function encode(url, { method = 'GET', path, headers = {}, body }) {
  const payload =
    body === undefined
      ? undefined
      : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  let head = `${method} ${path} HTTP/1.1\r\nHost: ${url.host}\r\n`;
  const names = Object.keys(headers).map((h) => h.toLowerCase());
  if (payload !== undefined) {
    if (!names.includes('content-type')) head += 'Content-Type: application/json\r\n';
    head += `Content-Length: ${payload.length}\r\n`;
  }
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  head += '\r\n';
  return payload === undefined ? Buffer.from(head) : Buffer.concat([Buffer.from(head), payload]);
}

/** One keep-alive connection; one request at a time; answers framed by Content-Length, chunked, or close. */
class Connection {
  static open(url) {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: url.hostname, port: Number(url.port), noDelay: true });
      socket.once('connect', () => resolve(new Connection(socket)));
      socket.once('error', reject);
    });
  }

  constructor(socket) {
    this.socket = socket;
    this.buffer = Buffer.alloc(0);
    this.pending = undefined;
    socket.on('data', (chunk) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on('end', () => this.finish(true));
    socket.on('error', (error) => this.fail(error));
  }

  send(wire) {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, head: undefined };
      this.socket.write(wire);
    });
  }

  parse() {
    const pending = this.pending;
    if (!pending) return;
    if (!pending.head) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end === -1) return;
      const lines = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
      const headers = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      pending.head = {
        status: Number(lines[0].split(' ')[1]),
        length:
          headers['content-length'] === undefined ? undefined : Number(headers['content-length']),
        chunked: /chunked/i.test(headers['transfer-encoding'] ?? ''),
        close: /close/i.test(headers.connection ?? ''),
      };
      this.buffer = this.buffer.subarray(end + 4);
    }
    const head = pending.head;
    if (head.length !== undefined) {
      if (this.buffer.length < head.length) return;
      this.buffer = this.buffer.subarray(head.length);
      return this.complete(head);
    }
    if (head.chunked) {
      const end = this.buffer.indexOf('\r\n0\r\n\r\n');
      const atStart = this.buffer.subarray(0, 5).toString('latin1') === '0\r\n\r\n';
      if (atStart) {
        this.buffer = this.buffer.subarray(5);
        return this.complete(head);
      }
      if (end === -1) return;
      this.buffer = this.buffer.subarray(end + 7);
      return this.complete(head);
    }
    if ([204, 304].includes(head.status) || (head.status >= 100 && head.status < 200))
      return this.complete(head);
    // No length and not chunked: the body ends when the server closes the connection.
  }

  complete(head) {
    const pending = this.pending;
    this.pending = undefined;
    pending.resolve({ status: head.status, close: head.close });
  }

  finish(closed) {
    const pending = this.pending;
    if (pending?.head && pending.head.length === undefined && !pending.head.chunked) {
      this.pending = undefined;
      pending.resolve({ status: pending.head.status, close: closed });
    } else if (pending) {
      this.pending = undefined;
      pending.reject(new Error('connection closed before the answer was complete'));
    }
  }

  fail(error) {
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(error);
  }

  destroy() {
    this.socket.destroy();
  }
}

/**
 * Polls `check` (a failure counts as "not yet": a server still starting, a database
 * restarting) every `everyMs` until it answers true; rejects naming `what` after `timeoutMs`.
 */
export async function until(check, timeoutMs, { what = 'a condition', everyMs = 100 } = {}) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    if (performance.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Starts the built server (dist/src/main.js) on `databaseUrl` and a free loopback port,
 * with `env` added to the few variables it needs; resolves once /health/ready answers 200.
 * BENCH_NODE_ARGS (e.g. `--cpu-prof`) and BENCH_LOG_LEVEL apply as to the main server.
 * Without `MODELS_DIR` in `env` the server gets an empty one of its own (removed when it
 * stops): a model installed in the developer's ./.data/models would otherwise replace the
 * latent-semantic model, and change what is measured.
 * @returns {Promise<{baseUrl: string, child: import('node:child_process').ChildProcess,
 *   exited: Promise<number | null>, stop: () => Promise<void>}>}
 */
export async function startServer({
  databaseUrl,
  env = {},
  // Another checkout's build (a before-and-after measurement runs both side by side).
  root = join(dirname(fileURLToPath(import.meta.url)), '..'),
}) {
  const port = await getRandomPort('127.0.0.1');
  const baseUrl = `http://127.0.0.1:${port}`;
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const noModels = env.MODELS_DIR === undefined ? emptyModelsDir() : undefined;
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist/src/main.js')], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      ...(noModels ? { MODELS_DIR: noModels } : {}),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (noModels) exited.then(() => rmSync(noModels, { recursive: true, force: true }));
  try {
    await until(async () => (await fetch(`${baseUrl}/health/ready`)).status === 200, 60_000, {
      what: 'the server to be ready',
    });
  } catch (error) {
    child.kill('SIGTERM');
    throw error;
  }
  return {
    baseUrl,
    child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/** A new empty folder for a server's MODELS_DIR: it runs no embedding model. */
export function emptyModelsDir() {
  return mkdtempSync(join(tmpdir(), 'agent-data-bench-no-models-'));
}

/**
 * Waits until the server's semantic model (the local embedder's vector side) has been learnt
 * from (nearly) every document it holds, so that searches are not measured while it learns
 * again and computes every document's vector.
 */
export async function semanticModelLearnt(baseUrl, headers) {
  await until(
    async () => {
      const response = await fetch(`${baseUrl}/admin/vectors/status`, { headers });
      const { lexical, embedder } = await response.json();
      return (
        // An embedding model (or a server of one) is the vector side: no model to learn.
        (embedder?.provider !== undefined && embedder.provider !== 'local') ||
        lexical?.semantic_model === undefined ||
        lexical.documents < 50 ||
        lexical.semantic_model?.documents >= lexical.documents * 0.9
      );
    },
    10 * 60_000,
    { what: 'the semantic model to be learnt', everyMs: 250 },
  );
}
