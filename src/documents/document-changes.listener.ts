import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { ListenConnection } from '../database/listen-connection';
import { WRITE_OPERATIONS } from './write-operations';

/** The channel the audit trail's trigger notifies (migrations/…-change-notifications.ts). */
export const DOCUMENT_CHANGES_CHANNEL = 'kb_document_changes';

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

const OPERATIONS: ReadonlySet<string> = new Set(WRITE_OPERATIONS);

/**
 * The committed writes of every replica and every source, as PostgreSQL announces them on
 * {@link DOCUMENT_CHANGES_CHANNEL}, received on the process's one {@link ListenConnection}
 * from the moment the first observer arrives, so that a process nobody listens to receives
 * none. Notifications sent while the connection was down are gone, so a lost connection is
 * not quietly mended: every observer is told ({@link ChangeObserver.interrupted}) and
 * dropped, and observers that arrive once the connection is back hear of changes from then
 * on. MCP listeners are ended that way and listen again, which is the revision's answer to
 * a broken stream (there is no resumption): each reconnection is a client's.
 */
@Injectable()
export class DocumentChangesListener implements OnApplicationShutdown {
  private readonly logger = new Logger('DocumentChanges');
  private readonly observers = new Set<ChangeObserver>();
  private stopped = false;

  constructor(private readonly connection: ListenConnection) {}

  /** Whether the channel is listened now. */
  get up(): boolean {
    return this.connection.state.up;
  }

  /**
   * Adds `observer` once the connection listens, so that every change committed after this
   * resolves reaches it. Rejects when the database cannot be reached now (nothing added).
   * Returns the function that removes it.
   */
  async observe(observer: ChangeObserver): Promise<() => void> {
    if (this.stopped) throw new Error('the server is shutting down');
    const listening = await this.connection.listen(DOCUMENT_CHANGES_CHANNEL, {
      notification: (payload) => this.announce(payload),
      lost: () => this.interrupt(),
    });
    if (this.stopped) throw new Error('the server is shutting down');
    if (!listening) {
      throw new Error('change notifications are unavailable: the database cannot be reached');
    }
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.observers.clear();
    await this.connection.unlisten(DOCUMENT_CHANGES_CHANNEL);
  }

  private announce(payload: string | undefined): void {
    const change = parseChange(payload);
    if (change === undefined) {
      this.logger.warn(`ignored a malformed ${DOCUMENT_CHANGES_CHANNEL} payload`);
      return;
    }
    for (const observer of this.observers) observer.change(change);
  }

  private interrupt(): void {
    if (this.stopped) return;
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
