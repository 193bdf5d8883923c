import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { safeMessage } from '../common/fault';
import { HealthService } from '../health/health.service';
import { EMBEDDER, Embedder } from './embedders/embedder.interface';
import { VectorSyncListener } from './sync/vector-sync.listener';
import { VECTOR_STORE, VectorStore } from './stores/vector-store.interface';
import { VectorStoreInitializer } from './stores/vector-store.initializer';

/**
 * Readiness checks of the vector pipeline. Only the listener is required (while sync is
 * on, in the process that runs the vector work): without it writes would quietly stop reaching search. The store and the embedder
 * are reported but not required: writes and reads of documents work without them, and the
 * pipeline catches up when they come back.
 */
@Injectable()
export class VectorsHealth {
  constructor(
    health: HealthService,
    config: AppConfig,
    listener: VectorSyncListener,
    stores: VectorStoreInitializer,
    @Inject(VECTOR_STORE) store: VectorStore,
    @Inject(EMBEDDER) embedder: Embedder,
  ) {
    health.register('vector_listener', () => {
      // Asked while down: PostgreSQL may be back already; do not wait for the backoff.
      if (config.vectorWorkHere && !listener.state.up) listener.reconnectNow();
      if (config.vectorWorkHere) {
        return { ok: listener.state.up, required: true, detail: { ...listener.state } };
      }
      return {
        ok: true,
        required: false,
        detail: config.vectorSyncEnabled
          ? 'the listener runs in the vector worker of this cluster'
          : 'vector sync is disabled (VECTOR_SYNC_ENABLED=false)',
      };
    });
    if (config.clusterRole === 'web') {
      // The store and the embedder are the vector worker's; its own checks report them.
      const elsewhere = {
        ok: true,
        required: false,
        detail: 'used by the vector worker of this cluster',
      };
      health.register('vector_store', () => elsewhere);
      health.register('embedder', () => elsewhere);
      return;
    }
    health.register(
      'vector_store',
      async () => {
        if (!stores.isReady) {
          return {
            ok: false,
            required: false,
            detail: stores.error === null ? 'not initialised yet' : safeMessage(stores.error),
          };
        }
        const check = await store.check();
        return { ok: check.ok, required: false, detail: check.detail };
      },
      // A store that cannot even be asked is reported, not required.
      { required: false },
    );
    health.register('embedder', () => {
      const state = embedder.health();
      return {
        ok: state.ok,
        required: false,
        detail: {
          provider: embedder.provider,
          model: embedder.model,
          last_success_at: state.lastSuccessAt,
          last_error: state.lastError,
        },
      };
    });
  }
}
