import { Inject, Injectable, Logger } from '@nestjs/common';
import { Client, Notification } from 'pg';
import { safeMessage } from '../../common/fault';
import { DATABASE_URL } from '../../database/database.module';
import { VectorSyncWorker } from './vector-sync.worker';
import { VectorSyncMetrics } from './vector-sync.metrics';

export const VECTOR_SYNC_CHANNEL = 'kb_vector_sync';
/** How the listener's connection shows in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'agent-data-vector-listener';

const RECONNECT_BASE_MS = 100;
/** Low: readiness waits on this connection, and PostgreSQL restarts take seconds. */
const RECONNECT_MAX_MS = 1000;
/** A LISTEN connection only receives; a periodic query notices one that died silently. */
const HEARTBEAT_MS = 30_000;

/** A type rather than an interface: it fills the open `listener` object of the status answer. */
export type ListenerState = {
  up: boolean;
  connected_since: string | null;
  reconnects: number;
  last_error: string | null;
};

/**
 * Holds its own PostgreSQL connection (not one of the pool's) running
 * `LISTEN kb_vector_sync`, and wakes the worker on every notification. When the
 * connection is lost it reconnects with exponential backoff and jitter capped at one
 * second (and at once when {@link reconnectNow} is called, e.g. by a readiness probe that
 * found PostgreSQL answering), and after every (re)connect has the worker sweep all
 * pending work, since notifications sent while nobody listened are gone.
 * `vector_sync_listener_up` shows whether it is connected.
 */
@Injectable()
export class VectorSyncListener {
  private readonly logger = new Logger('VectorSyncListener');
  private client: Client | undefined;
  private stopped = true;
  private failures = 0;
  private everConnected = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private connecting = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private connectedSince: Date | null = null;
  private reconnects = 0;
  private lastError: string | null = null;

  constructor(
    @Inject(DATABASE_URL) private readonly databaseUrl: string,
    private readonly worker: VectorSyncWorker,
    private readonly metrics: VectorSyncMetrics,
  ) {
    metrics.listenerUp.set(0);
  }

  get state(): ListenerState {
    return {
      up: this.client !== undefined,
      connected_since: this.connectedSince?.toISOString() ?? null,
      reconnects: this.reconnects,
      last_error: this.lastError,
    };
  }

  /** Connects (one attempt awaited; on failure it keeps trying in the background). */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.connect();
  }

  /** Down and waiting for the next attempt: try now instead. */
  reconnectNow(): void {
    if (this.stopped || this.client !== undefined || this.connecting) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.heartbeat);
    const client = this.client;
    this.client = undefined;
    this.connectedSince = null;
    this.metrics.listenerUp.set(0);
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    this.connecting = true;
    try {
      await this.attempt();
    } finally {
      this.connecting = false;
    }
  }

  private async attempt(): Promise<void> {
    const client = new Client({
      connectionString: this.databaseUrl,
      application_name: LISTENER_APPLICATION_NAME,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    client.on('notification', (message) => this.onNotification(message));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection closed')));
    try {
      await client.connect();
      await client.query(`LISTEN ${VECTOR_SYNC_CHANNEL}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.lastError = safeMessage((error as Error).message);
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.connectedSince = new Date();
    this.failures = 0;
    this.metrics.listenerUp.set(1);
    if (this.everConnected) {
      this.reconnects++;
      this.metrics.listenerReconnects.inc();
      this.logger.log(`LISTEN ${VECTOR_SYNC_CHANNEL} re-established: sweeping pending work`);
    }
    this.everConnected = true;
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').catch((error: Error) => this.lost(client, error));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
    // Whatever was written while nobody listened.
    this.worker.wake();
  }

  private onNotification(message: Notification): void {
    this.worker.wake();
    if (!message.payload) return;
    try {
      const event = JSON.parse(message.payload) as { op?: string; document_id?: string };
      if (event.op === 'delete' && typeof event.document_id === 'string') {
        this.worker.purged(event.document_id);
      }
    } catch {
      this.logger.warn(`ignored a malformed ${VECTOR_SYNC_CHANNEL} payload`);
    }
  }

  private lost(client: Client, error: Error): void {
    // 'error' and 'end' both arrive for one loss, and old clients may still speak.
    if (client !== this.client) return;
    this.client = undefined;
    this.connectedSince = null;
    clearInterval(this.heartbeat);
    this.metrics.listenerUp.set(0);
    this.lastError = safeMessage(error.message);
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.logger.warn(`LISTEN connection lost: ${error.message}`);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const cap = Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** this.failures);
    const delay = Math.round(cap / 2 + (Math.random() * cap) / 2);
    this.failures++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, delay);
  }
}
