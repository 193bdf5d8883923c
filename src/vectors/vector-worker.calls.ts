import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import {
  VECTOR_ANSWER,
  VECTOR_CALL,
  VECTOR_CALL_CANCEL,
  type VectorAnswer,
  type VectorCall,
  type VectorCallCancel,
} from '../cluster/messages';
import { failureOf } from '../cluster/vector-worker.client';
import { faultOf } from '../common/fault';
import { DomainError } from '../common/domain-error';
import { AppConfig } from '../config/app-config';
import { Access, type Folders } from '../documents/access';
import { SearchService } from './search/search.service';
import { VectorsAdminService } from './vectors-admin.service';

/**
 * In the vector worker of a cluster (WEB_CONCURRENCY > 1), answers the web workers' calls
 * (src/cluster/): `search` (SearchService.search with the caller's access) and `status`
 * (the pipeline's status, VectorsAdminService.status). A cancelled call's search is aborted.
 */
@Injectable()
export class VectorWorkerCalls implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('VectorWorkerCalls');
  private readonly running = new Map<number, AbortController>();
  private readonly onMessage = (message: unknown) => {
    const call = message as VectorCall | VectorCallCancel | null;
    if (call?.type === VECTOR_CALL) this.run(call);
    else if (call?.type === VECTOR_CALL_CANCEL) this.running.get(call.id)?.abort();
  };

  constructor(
    private readonly config: AppConfig,
    private readonly search: SearchService,
    private readonly admin: VectorsAdminService,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.clusterRole === 'vector') process.on('message', this.onMessage);
  }

  onModuleDestroy(): void {
    process.off('message', this.onMessage);
    for (const controller of this.running.values()) controller.abort();
  }

  private run(call: VectorCall): void {
    const controller = new AbortController();
    this.running.set(call.id, controller);
    this.dispatch(call, controller.signal)
      .then(
        (value): VectorAnswer => ({ type: VECTOR_ANSWER, id: call.id, value }),
        (error: unknown): VectorAnswer => {
          if (!(error instanceof DomainError) && !controller.signal.aborted) {
            this.logger.error(`${call.method}: ${(error as Error).stack ?? String(error)}`);
          }
          return { type: VECTOR_ANSWER, id: call.id, failure: failureOf(faultOf(error) ?? error) };
        },
      )
      .then((answer) => {
        this.running.delete(call.id);
        // Nobody waits for a cancelled call's answer.
        if (controller.signal.aborted) return;
        process.send?.(answer, (error: Error | null) => {
          if (error) this.logger.warn(`answering the primary: ${error.message}`);
        });
      });
  }

  private dispatch(call: VectorCall, signal: AbortSignal): Promise<unknown> {
    // The caller's access travels as its readable and writable folders.
    const args = call.args as { access: { read: Folders; write: Folders }; input?: object };
    const access = new Access(args.access.read, args.access.write);
    switch (call.method) {
      case 'search':
        return this.search.search({ ...(args.input as { query: string }), access, signal });
      case 'status':
        return this.admin.status(access);
      default:
        return Promise.reject(new Error(`no call named ${call.method}`));
    }
  }
}
