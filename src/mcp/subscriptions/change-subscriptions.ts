import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { Gauge } from 'prom-client';
import type { Principal } from '../../auth/api-key.service';
import { AppConfig } from '../../config/app-config';
import { AccessPolicyService } from '../../documents/access-policy.service';
import {
  type ChangeObserver,
  type DocumentChange,
  DocumentChangesListener,
} from '../../documents/document-changes.listener';
import { MetricsService } from '../../metrics/metrics.service';
import { documentUri } from '../resources/resource-uri';
import { type EndReason, type ListenSink, ListenStream } from './listen-stream';
import type { HonouredFilter } from './subscription-filter';

/** Why a listener was not opened. */
export type ListenRefusal =
  | { readonly kind: 'principal-limit'; readonly limit: number }
  | { readonly kind: 'total-limit'; readonly limit: number }
  | { readonly kind: 'unavailable'; readonly message: string };

/**
 * Every open listener of this process, fed by the one {@link DocumentChangesListener}
 * connection (docs/mcp.md, "Change notifications"). Each change is checked, per listener,
 * against the access its principal has now (so a policy read again applies from the next
 * change) and against its filter; a document the principal may not read never reaches it,
 * not even as a list change. Listeners are bounded per principal and in all; `mcp_listeners`
 * counts the open ones.
 */
@Injectable()
export class ChangeSubscriptions implements ChangeObserver, OnApplicationShutdown {
  private readonly logger = new Logger('ChangeSubscriptions');
  private readonly streams = new Map<ListenStream, Principal>();
  /** Open listeners by principal (`via:name`). */
  private readonly perPrincipal = new Map<string, number>();
  private readonly gauge: Gauge;
  private stopObserving: (() => void) | undefined;
  private closing = false;

  constructor(
    private readonly config: AppConfig,
    private readonly changes: DocumentChangesListener,
    private readonly policy: AccessPolicyService,
    metrics: MetricsService,
  ) {
    this.gauge = new Gauge({
      name: 'mcp_listeners',
      help: 'Open MCP change listeners (subscriptions/listen streams and stdio resources/subscribe)',
      registers: [metrics.registry],
    });
  }

  /** Notifications kept for a listener that reads slowly before it is dropped (MCP_LISTEN_QUEUE). */
  get queueLimit(): number {
    return this.config.mcpListenQueue;
  }

  /** Open listeners (in this process). */
  get count(): number {
    return this.streams.size;
  }

  /**
   * Opens a listener for `principal` and sends its acknowledgement, once changes committed
   * from now on are sure to reach it; or says why not (nothing opened).
   */
  async open(
    principal: Principal,
    id: RequestId | undefined,
    filter: HonouredFilter,
    sink: ListenSink,
  ): Promise<ListenStream | ListenRefusal> {
    const refused = this.refusal(principal);
    if (refused !== undefined) return refused;
    const who = keyOf(principal);
    // Counted before the wait, so that concurrent opens cannot pass the limits together.
    this.perPrincipal.set(who, (this.perPrincipal.get(who) ?? 0) + 1);
    try {
      this.stopObserving ??= await this.changes.observe(this);
    } catch (error) {
      this.release(who);
      return { kind: 'unavailable', message: (error as Error).message };
    }
    if (this.closing) {
      this.release(who);
      return { kind: 'unavailable', message: 'the server is shutting down' };
    }
    const stream = new ListenStream(id, filter, sink, this.config.mcpListenQueue, (ended, why) =>
      this.ended(ended, who, why),
    );
    this.streams.set(stream, principal);
    this.gauge.set(this.streams.size);
    stream.acknowledge();
    return stream;
  }

  change(change: DocumentChange): void {
    const uri = documentUri(change.documentId);
    for (const [stream, principal] of this.streams) {
      // Asked per change: a policy read again applies from the next one (accessOf caches).
      if (!this.policy.accessOf(principal, 'mcp').mayRead(change.documentId)) continue;
      if (stream.filter.names(change.documentId)) stream.updated(uri);
      if (stream.filter.changesList(change.op)) stream.listChanged();
    }
  }

  interrupted(): void {
    this.stopObserving = undefined;
    for (const stream of [...this.streams.keys()]) stream.end('interrupted');
  }

  /** Ends every listener gracefully (SIGTERM: clients listen again, on another replica). */
  endAll(): void {
    this.closing = true;
    for (const stream of [...this.streams.keys()]) stream.end('shutdown');
  }

  onApplicationShutdown(): void {
    this.endAll();
    this.stopObserving?.();
    this.stopObserving = undefined;
  }

  private refusal(principal: Principal): ListenRefusal | undefined {
    if (this.closing) return { kind: 'unavailable', message: 'the server is shutting down' };
    const total = [...this.perPrincipal.values()].reduce((sum, n) => sum + n, 0);
    if (total >= this.config.mcpListenersMax) {
      return { kind: 'total-limit', limit: this.config.mcpListenersMax };
    }
    if ((this.perPrincipal.get(keyOf(principal)) ?? 0) >= this.config.mcpListenersPerPrincipal) {
      return { kind: 'principal-limit', limit: this.config.mcpListenersPerPrincipal };
    }
    return undefined;
  }

  private ended(stream: ListenStream, who: string, why: EndReason): void {
    if (!this.streams.delete(stream)) return;
    this.release(who);
    this.gauge.set(this.streams.size);
    if (why === 'overflow') this.logger.warn(`a listener of ${who} fell behind and was dropped`);
  }

  private release(who: string): void {
    const left = (this.perPrincipal.get(who) ?? 1) - 1;
    if (left > 0) this.perPrincipal.set(who, left);
    else this.perPrincipal.delete(who);
  }
}

function keyOf(principal: Principal): string {
  return `${principal.via}:${principal.name}`;
}
