import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { type Backoff, backoffDelay } from '../retry/backoff';

/** How the connection shows in pg_stat_activity. */
export const LISTEN_APPLICATION_NAME = 'agent-data-listener';

/** Capped low: readiness waits on this connection, and PostgreSQL restarts take seconds. */
const RECONNECT: Backoff = { firstMs: 100, maxMs: 1000, jitter: 0.5 };
/** A LISTEN connection only receives; a periodic query notices one that died silently. */
const HEARTBEAT_MS = 30_000;
/** Channels are our own constants; anything else would be spliced into SQL. */
const CHANNEL_NAME = /^[a-z_][a-z0-9_]*$/;

/** What one consumer of a channel is told. */
export interface ChannelHandlers {
  /** A notification on the channel, in commit order. */
  notification(payload: string | undefined): void;
  /**
   * The channel is listened on a new connection: the first, or one after a loss. What was
   * notified before is gone: re-read what may have been missed.
   */
  listening?(): void;
  /** The connection was lost: nothing notified from now until {@link listening} arrives. */
  lost?(reason: string): void;
}

/** A type rather than an interface: it fills the open `listener` object of the status answer. */
export type ListenConnectionState = {
  up: boolean;
  connected_since: string | null;
  reconnects: number;
  /** As the driver said it, addresses included: sanitise before showing it to clients. */
  last_error: string | null;
};

/**
 * The one PostgreSQL connection of this process (not one of the pool's) that runs `LISTEN`,
 * for every channel a consumer asks for: the vector pipeline's wake-ups and the change
 * notifications ride on it together, so a process holds one such connection, and none while
 * nobody listens. It opens with the first channel and closes with the last. When it is lost
 * it reconnects with exponential backoff and jitter capped at one second (at once when
 * {@link reconnectNow} is called, e.g. by a readiness probe that found PostgreSQL answering),
 * LISTENs every channel again and tells each consumer ({@link ChannelHandlers.listening}),
 * since notifications sent while nobody listened are gone. Provided by the database module.
 */
export class ListenConnection implements OnApplicationShutdown {
  private readonly logger = new Logger('ListenConnection');
  private readonly channels = new Map<string, ChannelHandlers>();
  private client: Client | undefined;
  /** The channels LISTENed on {@link client}. */
  private listened = new Set<string>();
  private attempt: Promise<void> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private failures = 0;
  private everConnected = false;
  private stopped = false;
  private connectedSince: Date | null = null;
  private reconnects = 0;
  private lastError: string | null = null;

  constructor(private readonly databaseUrl: string) {}

  get state(): ListenConnectionState {
    return {
      up: this.client !== undefined,
      connected_since: this.connectedSince?.toISOString() ?? null,
      reconnects: this.reconnects,
      last_error: this.lastError,
    };
  }

  /**
   * Listens on `channel` for `handlers` (one consumer per channel), opening the connection
   * if need be. Resolves whether the channel is listened now, after one attempt at most;
   * when it is not, the connection keeps trying in the background and
   * {@link ChannelHandlers.listening} says when it is.
   */
  async listen(channel: string, handlers: ChannelHandlers): Promise<boolean> {
    if (!CHANNEL_NAME.test(channel)) throw new Error(`not a channel name: ${channel}`);
    if (this.stopped) return false;
    this.channels.set(channel, handlers);
    if (this.client === undefined) await this.connectNow();
    // Added while a connection was being opened, after it had LISTENed the others.
    const client = this.client;
    if (client !== undefined && !this.listened.has(channel)) {
      try {
        await client.query(`LISTEN ${channel}`);
        if (client === this.client) {
          this.listened.add(channel);
          handlers.listening?.();
        }
      } catch (error) {
        this.lost(client, error as Error);
      }
    }
    return this.client !== undefined && this.listened.has(channel);
  }

  /** Stops listening on `channel`; the last one closes the connection. */
  async unlisten(channel: string): Promise<void> {
    if (!this.channels.delete(channel)) return;
    const client = this.client;
    if (this.channels.size === 0) return this.close();
    this.listened.delete(channel);
    await client?.query(`UNLISTEN ${channel}`).catch(() => undefined);
  }

  /** Down and waiting for the next attempt: try now instead. */
  reconnectNow(): void {
    if (this.stopped || this.client !== undefined || this.attempt || this.channels.size === 0) {
      return;
    }
    void this.connectNow();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.channels.clear();
    await this.close();
  }

  private async close(): Promise<void> {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    clearInterval(this.heartbeat);
    const client = this.client;
    this.client = undefined;
    this.listened = new Set();
    this.connectedSince = null;
    await client?.end().catch(() => undefined);
  }

  private connectNow(): Promise<void> {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    return (this.attempt ??= this.connect().finally(() => (this.attempt = undefined)));
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.databaseUrl,
      application_name: LISTEN_APPLICATION_NAME,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    client.on('notification', (message) => {
      if (client === this.client) this.channels.get(message.channel)?.notification(message.payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection closed')));
    const channels = [...this.channels.keys()];
    try {
      await client.connect();
      for (const channel of channels) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.lastError = (error as Error).message;
      // Once per outage: a restart of PostgreSQL is a few seconds of attempts.
      if (this.failures === 0) {
        this.logger.warn(`LISTEN ${channels.join(', ')} failed: ${this.lastError}`);
      }
      this.scheduleReconnect();
      return;
    }
    if (this.stopped || this.channels.size === 0) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.listened = new Set(channels);
    this.connectedSince = new Date();
    this.failures = 0;
    if (this.everConnected) {
      this.reconnects++;
      this.logger.log(`LISTEN ${channels.join(', ')} re-established`);
    }
    this.everConnected = true;
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').catch((error: Error) => this.lost(client, error));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
    for (const channel of channels) this.channels.get(channel)?.listening?.();
  }

  private lost(client: Client, error: Error): void {
    // 'error' and 'end' both arrive for one loss, and old clients may still speak.
    if (client !== this.client) return;
    this.client = undefined;
    this.listened = new Set();
    this.connectedSince = null;
    clearInterval(this.heartbeat);
    this.lastError = error.message;
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.logger.warn(`LISTEN connection lost: ${this.lastError}`);
    for (const handlers of [...this.channels.values()]) handlers.lost?.(this.lastError);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer || this.channels.size === 0) return;
    const delay = backoffDelay(this.failures, RECONNECT);
    this.failures++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connectNow();
    }, delay);
    this.reconnectTimer.unref();
  }
}
