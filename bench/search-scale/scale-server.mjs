// A server of the search-at-scale scenario (scenarios/70-search-scale.mjs) on a PostgreSQL of
// its own, with the lexical side in its own memory (`local`) or in a collection of its own on a
// Qdrant node (`qdrant`, LEXICAL_STORE=qdrant): writes, waits for the pipeline and the
// semantic model, reads its memory, restarts it (and times restart-to-ready) and runs it in
// cluster mode to read the whole process tree's memory.
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { load, semanticModelLearnt, startServer, until } from '../lib.mjs';
import { OwnPostgres } from '../own-postgres.mjs';
import { qdrantMode } from '../qdrant.mjs';

export const KEY = 'search-scale-key-0123456789abcdef';
export const HEADERS = { 'X-API-Key': KEY };

/** Questions of the kinds agents ask, for the searches before a memory reading. */
const QUESTIONS = [
  'how do backups work',
  'retry with exponential backoff',
  'pino transport',
  'configure the logging level',
  'maxRetries',
];

/**
 * @param {object} options
 * @param {'local' | 'qdrant'} options.store
 * @param {{url: string}} [options.qdrant]  the node (store `qdrant`)
 * @param {(message: string) => void} options.log
 * @param {Record<string, string>} [options.env]  more variables for the server
 */
export async function scaleServer({ store, qdrant, log, env: extra = {} }) {
  const cluster = await OwnPostgres.create();
  const collection = `scale_${store}_${process.pid}`;
  const env = {
    API_KEYS: `scale:${KEY}:admin`,
    RATE_LIMIT_ADMIN_WRITES: 'off',
    ...(store === 'qdrant' ? qdrantMode(qdrant.url, collection) : {}),
    ...extra,
  };
  let server;
  try {
    server = await startServer({ databaseUrl: cluster.url, env });
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  const get = async (path) =>
    fetch(`${server.baseUrl}${path}`, { headers: HEADERS, signal: AbortSignal.timeout(60_000) });
  const status = async () => (await get('/admin/vectors/status')).json();
  /**
   * Every document searchable as at its write: with the local index, each one's record loaded
   * in this process and its vectors computed; in Qdrant, the store ready. Then the semantic
   * model learnt from (nearly) all of them, and a first hybrid search answered.
   */
  const searchable = async (size) => {
    const started = performance.now();
    await until(
      async () => {
        const s = await status().catch(() => ({}));
        const lexical =
          store === 'qdrant'
            ? s.lexical?.store === 'qdrant'
            : s.lexical?.loaded === true && s.lexical.documents >= size;
        return lexical && s.lexical.documents >= size && s.store?.ready === true;
      },
      10 * 60_000,
      { what: 'the index to be loaded', everyMs: 100 },
    );
    const loaded = performance.now();
    await semanticModelLearnt(server.baseUrl, HEADERS);
    const learnt = performance.now();
    await until(
      async () => (await get(`/search?query=${encodeURIComponent(QUESTIONS[0])}`)).status === 200,
      60_000,
      { what: 'a first search', everyMs: 100 },
    );
    const ms = (from, to) => Math.round(to - from);
    return {
      loaded: ms(started, loaded),
      learnt: ms(loaded, learnt),
      searched: ms(learnt, performance.now()),
    };
  };
  const searches = async (n) => {
    // A new connection each: in cluster mode the workers take turns.
    for (let i = 0; i < n; i++) {
      const response = await fetch(
        `${server.baseUrl}/search?query=${encodeURIComponent(QUESTIONS[i % QUESTIONS.length])}`,
        { headers: { ...HEADERS, Connection: 'close' } },
      );
      if (response.status !== 200) throw new Error(`search scale: search ${response.status}`);
      await response.arrayBuffer();
    }
  };
  log(
    `search scale (${store}): own PostgreSQL on port ${cluster.port}, own server on ${server.baseUrl}${store === 'qdrant' ? `, collection ${collection} on ${qdrant.url}` : ''}`,
  );
  return {
    store,
    collection,
    cluster,
    get pid() {
      return server.child.pid;
    },
    load: (options) => load({ baseUrl: server.baseUrl, ...options }),
    status,
    searches,
    async indexed() {
      await until(
        async () => {
          const s = await status();
          return (s.counts?.pending ?? 0) === 0 && (s.leased ?? 0) === 0;
        },
        6 * 60 * 60_000,
        { what: 'the pipeline to index every document', everyMs: 250 },
      );
    },
    /** Waits until the anchor fields (what links say of each document) are all read. */
    async anchorsRead() {
      await until(async () => Number((await status()).anchor_fields?.due ?? 0) === 0, 60 * 60_000, {
        what: 'the anchor fields to be read',
        everyMs: 250,
      });
    },
    /**
     * With the local embedder the vector side ranks by a model learnt from the documents:
     * searches are measured once it has been learnt from (nearly) all of them.
     */
    async learnt() {
      await semanticModelLearnt(server.baseUrl, HEADERS);
    },
    async residentMegabytes() {
      const text = await (await get('/metrics')).text();
      const bytes = Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1]);
      return Math.round(bytes / 1024 / 1024);
    },
    /** The process's peak resident memory since it started (the kernel's high-water mark). */
    peakMegabytes() {
      return Math.round(procStatus(server.child.pid, 'VmHWM') / 1024);
    },
    /**
     * Stops the server (how long its stop took), starts it again on the same database: spawn to searchable(size) (and
     * its phases: spawn to /health/ready, to the index loaded or the store ready, to the model
     * learnt, to a first search answered), and the memory after 40 searches.
     */
    async restart(size) {
      const stopping = performance.now();
      await server.stop();
      // SIGTERM to exit: the drain, and the index's snapshot written when it changed since.
      const stopMs = Math.round(performance.now() - stopping);
      const started = performance.now();
      server = await startServer({ databaseUrl: cluster.url, env });
      const healthy = Math.round(performance.now() - started);
      const phases = { healthy, ...(await searchable(size)) };
      const readyMs = Math.round(performance.now() - started);
      // The CPU the process spent to get there: what a machine not shared with others takes,
      // give or take PostgreSQL's share.
      const cpuMs = cpuMilliseconds(server.child.pid);
      await searches(40);
      return { readyMs, cpuMs, phases, stopMs, rss: await this.residentMegabytes() };
    },
    /**
     * The memory of the server's whole process tree with `workers` processes (1: one server;
     * more: cluster mode), after 40 searches; proportional set sizes (each shared page counted
     * once, as a pod is charged) and resident sizes summed.
     */
    async treeMegabytes(workers, size) {
      await server.stop();
      server = await startServer({
        databaseUrl: cluster.url,
        env: { ...env, WEB_CONCURRENCY: String(workers) },
      });
      await searchable(size);
      await searches(40);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const tree = processTree(server.child.pid);
      const rss = tree.map((pid) => Math.round(procStatus(pid, 'VmRSS') / 1024));
      const pss = tree.map((pid) => Math.round(proportionalKb(pid) / 1024));
      return {
        total: pss.reduce((a, b) => a + b, 0),
        parts: pss.join(' + '),
        rss: rss.reduce((a, b) => a + b, 0),
      };
    },
    async close() {
      await server.stop();
      await cluster.destroy();
    },
  };
}

/** The user and system CPU time of a process (all its threads) so far, ms. */
function cpuMilliseconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, fields 14 and 15 of the line, in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** A field of /proc/PID/status in kB (VmRSS, VmHWM). */
function procStatus(pid, field) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

/**
 * A process's proportional set size in kB: its private pages, and its share of the pages it
 * shares with others (the node binary's code, mapped by every worker). Summed over a process
 * tree it counts each page once, as the kernel charges a pod (its memory cgroup); a sum of
 * resident sizes counts the binary once per worker (some 46 MB each).
 */
function proportionalKb(pid) {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return Number(/^Pss:\s+(\d+)/m.exec(text)?.[1] ?? 0);
}

/** `pid` and its descendants, from /proc. */
function processTree(pid) {
  const parents = new Map();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  }
  return tree;
}
