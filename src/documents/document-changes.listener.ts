import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Client, type Notification } from 'pg';
import { safeMessage } from '../common/fault';
import { DATABASE_URL } from '../database/database.module';

/** The channel the audit trail's trigger notifies (migrations/…-change-notifications.ts). */
export const DOCUMENT_CHANGES_CHANNEL = 'kb_document_changes';
/** How the connection shows in pg_stat_activity. */
export const CHANGES_APPLICATION_NAME = 'agent-data-change-listener';

/** What was done to a document: the operations of the audit trail. */
export type ChangeOperation =
  'create' | 'update' | 'delete' | 'restore' | 'purge' | 'move' | 'moved-away';

/** One committed write, as the database announced it. */
export interface DocumentChange {
  readonly op: ChangeOperation;
  readonly documentId: string;
}

/** Told of each change, in commit order, or that changes may have been missed. */
export interface ChangeObserver {
  change(change: DocumentChange): void;
  /**
   * The connection was lost: changes committed since may never be announced. Observers
   * that promised to report every change end their promise here.
   */
  interrupted(): void;
}

const OPERATIONS: ReadonlySet<string> = new Set([
  'create',
  'update',
  'delete',
  'restore',
  'purge',
  'move',
  'moved-away',
]);
/** A LISTEN connection only receives; a periodic query notices one that died silently. */
const HEARTBEAT_MS = 30_000;

/**
 * The committed writes of every replica and every source, as PostgreSQL announces them on
 * {@link DOCUMENT_CHANGES_CHANNEL}: one connection of its own per process (not one of the
 * pool's), opened when the first observer arrives, so that a process nobody listens to holds
 * none. Notifications sent while nobody listened are gone, so a lost connection is not
 * quietly mended: every observer is told ({@link ChangeObserver.interrupted}) and dropped,
 * and the next observer to arrive opens a new connection. MCP listeners are ended that way
 * and listen again, which is the revision's answer to a broken stream (there is no
 * resumption): each reconnection is a client's.
 */
@Injectable()
export class DocumentChangesListener implements OnApplicationShutdown {
  private readonly logger = new Logger('DocumentChanges');
  private readonly observers = new Set<ChangeObserver>();
  private client: Client | undefined;
  /** The connection being opened, awaited by every observer that arrives meanwhile. */
  private connecting: Promise<void> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(@Inject(DATABASE_URL) private readonly databaseUrl: string) {}

  /** Whether the LISTEN connection is open. */
  get up(): boolean {
    return this.client !== undefined;
  }

  /**
   * Adds `observer` once the connection listens, so that every change committed after this
   * resolves reaches it. Rejects when the database cannot be reached now (nothing added).
   * Returns the function that removes it.
   */
  async observe(observer: ChangeObserver): Promise<() => void> {
    if (this.stopped) throw new Error('the server is shutting down');
    if (this.client === undefined) {
      this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
      await this.connecting;
      if (this.client === undefined) {
        throw new Error('change notifications are unavailable: the database cannot be reached');
      }
    }
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.databaseUrl,
      application_name: CHANGES_APPLICATION_NAME,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    client.on('notification', (message) => this.announce(message));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection closed')));
    try {
      await client.connect();
      await client.query(`LISTEN ${DOCUMENT_CHANGES_CHANNEL}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.logger.warn(
        `LISTEN ${DOCUMENT_CHANGES_CHANNEL} failed: ${safeMessage((error as Error).message)}`,
      );
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').catch((error: Error) => this.lost(client, error));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private announce(message: Notification): void {
    const change = parseChange(message.payload);
    if (change === undefined) {
      this.logger.warn(`ignored a malformed ${DOCUMENT_CHANGES_CHANNEL} payload`);
      return;
    }
    for (const observer of this.observers) observer.change(change);
  }

  private lost(client: Client, error: Error): void {
    // 'error' and 'end' both arrive for one loss.
    if (client !== this.client) return;
    this.client = undefined;
    clearInterval(this.heartbeat);
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.logger.warn(`LISTEN ${DOCUMENT_CHANGES_CHANNEL} lost: ${safeMessage(error.message)}`);
    const told = [...this.observers];
    this.observers.clear();
    for (const observer of told) observer.interrupted();
  }
}

/** The change a payload announces, or `undefined` when it is not one. */
export function parseChange(payload: string | undefined): DocumentChange | undefined {
  if (!payload) return undefined;
  try {
    const value = JSON.parse(payload) as { op?: unknown; document_id?: unknown };
    if (typeof value.op !== 'string' || !OPERATIONS.has(value.op)) return undefined;
    if (typeof value.document_id !== 'string') return undefined;
    return { op: value.op as ChangeOperation, documentId: value.document_id };
  } catch {
    return undefined;
  }
}
