import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Logger } from 'pino';
import {
  METRICS_REQUEST,
  PRIMARY_ANSWER,
  type PrimaryAnswer,
  REGISTRY_REQUEST,
  WORKER_LISTENING,
  WORKER_METRICS,
  type WorkerMetrics,
  type WorkerRequest,
  request,
  VECTOR_ANSWER,
  VECTOR_CALL,
  VECTOR_CALL_CANCEL,
  type VectorAnswer,
  type VectorCall,
  type VectorCallCancel,
} from '../cluster/messages';
import { VectorCallRouter } from './vector-call-router';
import { createRootLogger } from '../common/logging';
import { type Backoff, backoffDelay } from '../retry/backoff';
import { type AppConfig, hangUpReloads } from '../config/app-config';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../database/embedded-postgres';
import { announcementOf } from '../local-server/announcement-of';
import { announceServer } from '../local-server/server-announcement';

type Role = 'vector' | 'web';

/** Restart delays of a worker that died: doubling from the first, capped. */
const RESTART: Backoff = { firstMs: 1000, maxMs: 30_000, jitter: 0.2 };
/** A worker that ran this long before dying is restarted after the first delay again. */
const STABLE_MS = 60_000;
/**
 * Beyond the drain and the shutdown timeout, how long a worker may take to exit: the vector
 * worker writes the lexical index's snapshot first when it changed (at most 10 s). Within the
 * 15 s the chart's grace period gives beyond the drain.
 */
const EXIT_GRACE_MS = 12_000;
/** How long a scrape waits for each worker's metrics (the asking worker waits 6 s in all). */
const WORKER_METRICS_TIMEOUT_MS = 3000;

/**
 * Cluster mode (`WEB_CONCURRENCY` > 1): this process is the primary. It serves no request
 * itself; it
 *
 * - starts the embedded PostgreSQL once when DATABASE_URL is unset and hands its URL to the
 *   workers;
 * - forks the `vector` worker first (it applies the migrations, runs the vector pipeline
 *   and holds the search index and the embedder, beside its requests), then, once it
 *   listens, the `web` workers (requests only: they ask the vector worker for searches,
 *   through this process, rather than hold a copy of the index each); all of them share
 *   the port (node:cluster hands out connections);
 * - forks again a worker that dies, with the same role, after a delay that doubles from 1 s
 *   to 30 s while it keeps dying;
 * - aggregates the metrics of the workers that listen (prom-client's
 *   `AggregatorRegistry.aggregate`) for the worker that received a scrape;
 * - on SIGTERM or SIGINT, has every worker drain and stop as a single server would
 *   (src/shutdown.ts), kills those that outlive the shutdown timeout, stops the embedded
 *   PostgreSQL and exits.
 *
 * Start-up fails (exit 1) when the first worker cannot start.
 */
export async function runPrimary(config: AppConfig): Promise<void> {
  const log = createRootLogger(config).child({ context: 'Cluster' });
  // Signals are handled from the first moment: a SIGTERM while the embedded PostgreSQL
  // starts stops it once started, rather than leaving it running.
  const database: Promise<EmbeddedPostgresHandle | null> =
    config.databaseUrl === undefined
      ? startEmbeddedPostgres(config.dataDir, {
          info: (m) => log.info(m),
          warn: (m) => log.warn(m),
          debug: (m) => log.debug(m),
        })
      : Promise.resolve(null);
  const roles = new Map<Worker, Role>();
  /** Workers that listen: the ones a scrape asks for their metrics. */
  const listening = new Set<Worker>();
  const vectorCalls = new VectorCallRouter(log);
  const failures: Record<Role, number> = { vector: 0, web: 0 };
  let stopping = false;
  let up = false;

  const stopDatabase = async () => {
    const embedded = await database.catch(() => null);
    await embedded
      ?.stop()
      .catch((error: Error) => log.error(`stopping PostgreSQL: ${error.message}`));
  };

  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal} received: stopping ${roles.size} workers`);
    const exits = [...roles.keys()].map(
      (worker) =>
        new Promise<void>((resolve) =>
          worker.process.exitCode !== null ? resolve() : worker.once('exit', () => resolve()),
        ),
    );
    for (const worker of roles.keys()) worker.process.kill('SIGTERM');
    const deadline = config.shutdownDrainMs + config.shutdownTimeoutMs + EXIT_GRACE_MS;
    const timer = setTimeout(() => {
      for (const worker of roles.keys()) {
        log.warn(`worker ${worker.process.pid} still running after ${deadline} ms: killing it`);
        worker.process.kill('SIGKILL');
      }
    }, deadline);
    await Promise.all(exits);
    clearTimeout(timer);
    await stopDatabase();
    log.info('stopped');
    process.exit(0);
  };
  // Every time, not once (`npm start` passes a terminal's Ctrl-C on: it comes twice): without
  // a listener the second would end the primary before it stopped PostgreSQL.
  process.on('SIGTERM', (signal) => void stop(signal));
  process.on('SIGINT', (signal) => void stop(signal));
  // Each worker reads the access policy file again on SIGHUP, and the vector worker the
  // sources file: pass it on to those that listen for it (a process without a handler for
  // SIGHUP would end on it). Without either file SIGHUP is a closed terminal: stop as on
  // SIGTERM, PostgreSQL included, rather than end and leave it running.
  const policyFile = config.accessPolicy !== undefined && 'file' in config.accessPolicy;
  if (hangUpReloads(config)) {
    process.on('SIGHUP', () => {
      for (const [worker, role] of roles) {
        if (policyFile || role === 'vector') worker.process.kill('SIGHUP');
      }
    });
  } else {
    process.on('SIGHUP', (signal) => void stop(signal));
  }

  const databaseUrl = (await database)?.url ?? config.databaseUrl;
  if (stopping) return;

  const fork = (role: Role): Worker => {
    const worker = cluster.fork({
      DATABASE_URL: databaseUrl,
      AGENT_DATA_CLUSTER_ROLE: role,
      // Every worker admits the agents this primary announces to (src/local-server/).
      AGENT_DATA_LOCAL_TOKEN: config.localAgentToken,
      // The vector worker applied them before any web worker starts.
      ...(role === 'web' ? { MIGRATIONS_RUN: 'false' } : {}),
    });
    roles.set(worker, role);
    const started = Date.now();
    // A message to a worker that has just died fails: that must not end the primary.
    worker.on('error', (error: Error) =>
      log.warn(`worker ${worker.process.pid}: ${error.message}`),
    );
    worker.on('message', (message: WorkerRequest) => {
      switch (message?.type) {
        case WORKER_LISTENING:
          listening.add(worker);
          if (role === 'vector') vectorCalls.vectorListens(worker);
          break;
        case METRICS_REQUEST:
          answer(worker, message, [...listening], log);
          break;
        case VECTOR_CALL:
          vectorCalls.call(worker, message as unknown as VectorCall);
          break;
        case VECTOR_CALL_CANCEL:
          vectorCalls.cancel(worker, message as VectorCallCancel);
          break;
        case VECTOR_ANSWER:
          if (role === 'vector') vectorCalls.answer(message as unknown as VectorAnswer);
          break;
      }
    });
    worker.once('exit', (code, signal) => {
      roles.delete(worker);
      listening.delete(worker);
      vectorCalls.exited(worker);
      // Before the cluster is up, start-up itself reports the failure.
      if (stopping || !up) return;
      failures[role] = Date.now() - started >= STABLE_MS ? 1 : failures[role] + 1;
      const delay = backoffDelay(failures[role] - 1, RESTART);
      log.error(
        `${role} worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); a new one starts in ${delay} ms`,
      );
      setTimeout(() => {
        if (!stopping) fork(role);
      }, delay).unref();
    });
    return worker;
  };

  // The vector worker first: it applies the migrations; the others start once it listens.
  const first = fork('vector');
  const firstListens = await new Promise<boolean>((resolve) => {
    first.on('message', (message: WorkerRequest) => {
      if (message?.type === WORKER_LISTENING) resolve(true);
    });
    first.once('exit', () => resolve(false));
  });
  if (stopping) return;
  if (!firstListens) {
    stopping = true;
    log.error('the first worker could not start; see its log above');
    await stopDatabase();
    process.exit(1);
  }
  up = true;
  for (let i = 1; i < config.webConcurrency; i++) fork('web');
  log.info(`cluster of ${config.webConcurrency} workers on port ${config.port}`);
  // The primary announces the cluster once, and withdraws it as it stops. (With PORT=0 it
  // does not know the port its workers were given.)
  if (config.port !== 0) {
    await announceServer(config.dataDir, announcementOf(config, config.port), {
      info: (m) => log.info(m),
      warn: (m) => log.warn(m),
    });
  }
}

/**
 * Answers a worker's question (today: the metrics of the cluster). The metrics are those of
 * the workers that listen, each asked for its registry: a worker still starting (or gone)
 * is not waited for, and one that does not answer within {@link WORKER_METRICS_TIMEOUT_MS}
 * is left out of that scrape.
 */
function answer(worker: Worker, message: WorkerRequest, workers: Worker[], log: Logger): void {
  const reply = (fields: Partial<PrimaryAnswer>) => {
    if (!worker.isConnected()) return;
    worker.send({ type: PRIMARY_ANSWER, id: message.id, ...fields }, (error: Error | null) => {
      if (error) log.warn(`answering worker ${worker.process.pid}: ${error.message}`);
    });
  };
  Promise.all(workers.map(registryOf))
    .then(async (registries) => {
      const answered = registries.filter((r) => r !== undefined);
      if (answered.length === 0) throw new Error('no worker answered');
      reply({ value: await AggregatorRegistry.aggregate(answered).metrics() });
    })
    .catch((error: Error) => {
      log.warn(`aggregating the workers' metrics failed: ${error.message}`);
      reply({ error: error.message });
    });
}

/** A worker's metrics as JSON, `undefined` when it does not answer in time. */
async function registryOf(
  worker: Worker,
): Promise<MetricObjectWithValues<MetricValue<string>>[] | undefined> {
  if (!worker.isConnected()) return undefined;
  const reply = await request<WorkerMetrics>(
    worker,
    REGISTRY_REQUEST,
    WORKER_METRICS,
    WORKER_METRICS_TIMEOUT_MS,
  );
  return reply?.metrics;
}
