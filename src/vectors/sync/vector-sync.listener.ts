import { Injectable, Logger } from '@nestjs/common';
import { safeMessage } from '../../common/fault';
import { ListenConnection, type ListenConnectionState } from '../../database/listen-connection';
import { VectorSyncWorker } from './vector-sync.worker';
import { VectorSyncMetrics } from './vector-sync.metrics';

export const VECTOR_SYNC_CHANNEL = 'kb_vector_sync';

/** The status answer's `listener` object. */
export type ListenerState = ListenConnectionState;

const NOT_LISTENING: ListenerState = Object.freeze({
  up: false,
  connected_since: null,
  reconnects: 0,
  last_error: null,
});

/**
 * Listens on `kb_vector_sync` over the process's one {@link ListenConnection}, and wakes
 * the worker on every notification. The connection reconnects by itself when lost, and
 * after every (re)connect the worker sweeps all pending work, since notifications sent
 * while nobody listened are gone. `vector_sync_listener_up` shows whether it listens.
 */
@Injectable()
export class VectorSyncListener {
  private readonly logger = new Logger('VectorSyncListener');
  private started = false;
  private everListened = false;

  constructor(
    private readonly connection: ListenConnection,
    private readonly worker: VectorSyncWorker,
    private readonly metrics: VectorSyncMetrics,
  ) {
    metrics.listenerUp.set(0);
  }

  get state(): ListenerState {
    if (!this.started) return { ...NOT_LISTENING };
    const state = this.connection.state;
    return { ...state, last_error: state.last_error && safeMessage(state.last_error) };
  }

  /** Listens (one attempt awaited; on failure the connection keeps trying in the background). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.connection.listen(VECTOR_SYNC_CHANNEL, {
      notification: (payload) => this.onNotification(payload),
      listening: () => this.listening(),
      lost: () => this.metrics.listenerUp.set(0),
    });
  }

  /** Down and waiting for the next attempt: try now instead. */
  reconnectNow(): void {
    if (this.started) this.connection.reconnectNow();
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.metrics.listenerUp.set(0);
    await this.connection.unlisten(VECTOR_SYNC_CHANNEL);
  }

  private listening(): void {
    this.metrics.listenerUp.set(1);
    if (this.everListened) {
      this.metrics.listenerReconnects.inc();
      this.logger.log(`LISTEN ${VECTOR_SYNC_CHANNEL} re-established: sweeping pending work`);
    }
    this.everListened = true;
    // Whatever was written while nobody listened.
    this.worker.wake();
  }

  private onNotification(payload: string | undefined): void {
    this.worker.wake();
    if (!payload) return;
    try {
      const event = JSON.parse(payload) as { op?: string; document_id?: string };
      if (event.op === 'delete' && typeof event.document_id === 'string') {
        this.worker.purged(event.document_id);
      }
    } catch {
      this.logger.warn(`ignored a malformed ${VECTOR_SYNC_CHANNEL} payload`);
    }
  }
}
