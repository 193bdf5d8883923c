import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type PrometheusContentType } from 'prom-client';
import type { Logger } from 'pino';
import {
  METRICS_REQUEST,
  type PrimaryAnswer,
  WORKER_LISTENING,
  type WorkerRequest,
} from './cluster-messages';
import { createRootLogger } from './common/logging';
import type { AppConfig } from './config/app-config';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from './database/embedded-postgres';

type Role = 'vector' | 'web';

/** Restart delays of a worker that died: doubling from the first, capped at the last. */
const RESTART_FIRST_MS = 1000;
const RESTART_MAX_MS = 30_000;
/** A worker that ran this long before dying is restarted after the first delay again. */
const STABLE_MS = 60_000;
/** Beyond the drain and the shutdown timeout, how long a worker may take to exit. */
const EXIT_GRACE_MS = 5000;

/**
 * Cluster mode (`WEB_CONCURRENCY` > 1): this process is the primary. It serves no request
 * itself; it
 *
 * - starts the embedded PostgreSQL once when DATABASE_URL is unset and hands its URL to the
 *   workers;
 * - forks the `vector` worker first (it applies the migrations and runs the vector
 *   pipeline beside its requests), then, once it listens, the `web` workers (requests
 *   only); all of them share the port (node:cluster hands out connections);
 * - forks again a worker that dies, with the same role, after a delay that doubles from 1 s
 *   to 30 s while it keeps dying;
 * - aggregates the workers' metrics (prom-client's AggregatorRegistry) for the worker that
 *   received a scrape;
 * - on SIGTERM or SIGINT, has every worker drain and stop as a single server would
 *   (src/shutdown.ts), kills those that outlive the shutdown timeout, stops the embedded
 *   PostgreSQL and exits.
 *
 * Start-up fails (exit 1) when the first worker cannot start.
 */
export async function runPrimary(config: AppConfig): Promise<void> {
  const log = createRootLogger(config).child({ context: 'Cluster' });
  let embedded: EmbeddedPostgresHandle | null = null;
  let databaseUrl = config.databaseUrl;
  if (databaseUrl === undefined) {
    embedded = await startEmbeddedPostgres(config.dataDir, {
      info: (m) => log.info(m),
      warn: (m) => log.warn(m),
      debug: (m) => log.debug(m),
    });
    databaseUrl = embedded.url;
  }
  const aggregator = new AggregatorRegistry<PrometheusContentType>();
  const roles = new Map<Worker, Role>();
  const failures: Record<Role, number> = { vector: 0, web: 0 };
  let stopping = false;

  const fork = (role: Role): Worker => {
    const worker = cluster.fork({
      DATABASE_URL: databaseUrl,
      AGENT_DATA_CLUSTER_ROLE: role,
      // The vector worker applied them before any web worker starts.
      ...(role === 'web' ? { MIGRATIONS_RUN: 'false' } : {}),
    });
    roles.set(worker, role);
    const started = Date.now();
    worker.on('message', (message: WorkerRequest) => answer(worker, message, aggregator, log));
    worker.once('exit', (code, signal) => {
      roles.delete(worker);
      if (stopping) return;
      failures[role] = Date.now() - started >= STABLE_MS ? 1 : failures[role] + 1;
      const delay = Math.min(RESTART_MAX_MS, RESTART_FIRST_MS * 2 ** (failures[role] - 1));
      log.error(
        `${role} worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); a new one starts in ${delay} ms`,
      );
      setTimeout(() => {
        if (!stopping) fork(role);
      }, delay).unref();
    });
    return worker;
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
    await embedded
      ?.stop()
      .catch((error: Error) => log.error(`stopping PostgreSQL: ${error.message}`));
    log.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', (signal) => void stop(signal));
  process.once('SIGINT', (signal) => void stop(signal));

  // The vector worker first: it applies the migrations; the others start once it listens.
  const first = fork('vector');
  const listening = await new Promise<boolean>((resolve) => {
    first.on('message', (message: WorkerRequest) => {
      if (message?.type === WORKER_LISTENING) resolve(true);
    });
    first.once('exit', () => resolve(false));
  });
  if (!listening) {
    if (stopping) return;
    stopping = true;
    log.error('the first worker could not start; see its log above');
    await embedded?.stop().catch(() => undefined);
    process.exit(1);
  }
  for (let i = 1; i < config.webConcurrency; i++) fork('web');
  log.info(`cluster of ${config.webConcurrency} workers on port ${config.port}`);
}

/** Answers a worker's question (today: the aggregated metrics). */
function answer(
  worker: Worker,
  message: WorkerRequest,
  aggregator: AggregatorRegistry<PrometheusContentType>,
  log: Logger,
): void {
  if (message?.type !== METRICS_REQUEST) return;
  const reply = (fields: Partial<PrimaryAnswer>) => {
    if (worker.isConnected()) worker.send({ type: 'agent-data:answer', id: message.id, ...fields });
  };
  aggregator.clusterMetrics().then(
    (value) => reply({ value }),
    (error: Error) => {
      log.warn(`aggregating the workers' metrics failed: ${error.message}`);
      reply({ error: error.message });
    },
  );
}
