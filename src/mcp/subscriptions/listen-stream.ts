import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/core/internal';
import { HTTP_REFUSAL, jsonRpcError } from '../../transport/json-rpc-error';
import { decorate } from '../modern-results';
import type { HonouredFilter } from './subscription-filter';

/** Where a stream's messages go: an SSE response, or a stdio session's stdout. */
export interface ListenSink {
  /** Writes one JSON-RPC message; `false` when the sink is full (wait for {@link onDrain}). */
  write(message: object): boolean;
  /** Calls `resume` once, when a full sink can take more. */
  onDrain(resume: () => void): void;
  /** Ends the sink, after `last` when given; writes nothing more. */
  end(last: object | undefined, reason: EndReason): void;
}

/** Why a stream ended. */
export type EndReason = 'closed' | 'shutdown' | 'overflow' | 'interrupted';

/**
 * One listener: its filter, whose principal it listens as, and the notifications on their way
 * to its sink. A reader slower than the changes has its notifications kept in a queue of at
 * most `queueLimit`; one more ends the stream with an error saying it fell behind, rather
 * than holding memory without bound: the client listens again and re-reads. A list change
 * already waiting in the queue is not queued twice (the client re-lists once either way).
 *
 * `id` is the `subscriptions/listen` request's id, stamped on every message; a stream
 * opened by the 2025 `resources/subscribe` has none, and its notifications carry no `_meta`.
 */
export class ListenStream {
  private readonly queue: object[] = [];
  private listChangedQueued = false;
  private waiting = false;
  private ended = false;

  constructor(
    readonly id: RequestId | undefined,
    readonly filter: HonouredFilter,
    private readonly sink: ListenSink,
    private readonly queueLimit: number,
    /** Told once, when the stream ends for any reason. */
    private readonly onEnd: (stream: ListenStream, reason: EndReason) => void,
  ) {}

  /** Notifications waiting for the reader (never more than the queue limit). */
  get queued(): number {
    return this.queue.length;
  }

  get open(): boolean {
    return !this.ended;
  }

  /** Sends `notifications/subscriptions/acknowledged`: the first message of the stream. */
  acknowledge(): void {
    this.push({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: this.filter.acknowledged() },
    });
  }

  /** `notifications/resources/updated` for `uri`. */
  updated(uri: string): void {
    this.push({ method: 'notifications/resources/updated', params: { uri } });
  }

  /** `notifications/resources/list_changed`, unless one is already waiting. */
  listChanged(): void {
    if (this.listChangedQueued) return;
    if (this.waiting) this.listChangedQueued = true;
    this.push({ method: 'notifications/resources/list_changed', params: {} });
  }

  /**
   * Ends the stream. `closed`: the client went away or cancelled, nothing more is written.
   * `shutdown`: the listen request's empty result (the revision's graceful end). `overflow`
   * and `interrupted`: an error answer to the listen request saying why, so the client knows
   * to listen again and re-read.
   */
  end(reason: EndReason): void {
    if (this.ended) return;
    this.ended = true;
    this.queue.length = 0;
    // A 2025 subscription has no request to answer: its stream just stops.
    this.sink.end(
      reason === 'closed' || this.id === undefined ? undefined : this.last(reason),
      reason,
    );
    this.onEnd(this, reason);
  }

  private push(notification: { method: string; params: Record<string, unknown> }): void {
    if (this.ended) return;
    const message = {
      jsonrpc: '2.0',
      method: notification.method,
      params:
        this.id === undefined
          ? notification.params
          : { ...notification.params, _meta: { [SUBSCRIPTION_ID_META_KEY]: this.id } },
    };
    if (this.waiting) {
      if (this.queue.length >= this.queueLimit) return this.end('overflow');
      this.queue.push(message);
      return;
    }
    if (!this.sink.write(message)) this.wait();
  }

  private wait(): void {
    this.waiting = true;
    this.sink.onDrain(() => this.flush());
  }

  private flush(): void {
    this.waiting = false;
    while (!this.ended && this.queue.length > 0) {
      const message = this.queue.shift()!;
      if (isListChanged(message)) this.listChangedQueued = false;
      if (!this.sink.write(message)) return this.wait();
    }
  }

  private last(reason: Exclude<EndReason, 'closed'>): object {
    const id = this.id ?? null;
    switch (reason) {
      case 'shutdown':
        return {
          jsonrpc: '2.0',
          id,
          result: decorate({ _meta: { [SUBSCRIPTION_ID_META_KEY]: id } }, undefined),
        };
      case 'overflow':
        return jsonRpcError(
          id,
          HTTP_REFUSAL,
          `Listener dropped for falling behind: more than ${this.queueLimit} notifications waited to be read (MCP_LISTEN_QUEUE); listen again and re-read what you follow`,
          { code: 'LISTENER_TOO_SLOW', limit: this.queueLimit },
        );
      case 'interrupted':
        return jsonRpcError(
          id,
          HTTP_REFUSAL,
          'Change notifications were interrupted (the server lost its database connection); listen again and re-read what you follow',
          { code: 'NOTIFICATIONS_INTERRUPTED' },
        );
    }
  }
}

function isListChanged(message: object): boolean {
  return (message as { method?: string }).method === 'notifications/resources/list_changed';
}
