import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { safeMessage } from '../common/fault';
import type { CheckResult } from './health.schemas';

export type ReadinessCheck = () => Promise<CheckResult> | CheckResult;

/**
 * Readiness: PostgreSQL reachable and migrations applied, plus the checks other modules
 * register (the vector listener, store and embedder).
 */
@Injectable()
export class HealthService {
  private readonly checks = new Map<string, { check: ReadinessCheck; required: boolean }>();
  private stopping = false;

  constructor(private readonly dataSource: DataSource) {
    this.register('postgres', () => this.postgres());
  }

  /**
   * Adds a check. `required` says whether a check that throws (or does not answer within
   * 3 s) makes the service unready; a check that answers says so itself.
   */
  register(name: string, check: ReadinessCheck, options: { required?: boolean } = {}): void {
    this.checks.set(name, { check, required: options.required ?? true });
  }

  /** The process is shutting down: readiness answers 503 from now on. */
  shuttingDown(): void {
    this.stopping = true;
  }

  async readiness(): Promise<{ ready: boolean; checks: Record<string, CheckResult> }> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, { check, required }]): Promise<[string, CheckResult]> => {
        try {
          return [name, await withTimeout(Promise.resolve(check()), 3000)];
        } catch (error) {
          // Unauthenticated endpoint: what failed, never an internal address or path.
          return [name, { ok: false, required, detail: safeMessage((error as Error).message) }];
        }
      }),
    );
    if (this.stopping) {
      entries.push(['shutdown', { ok: false, required: true, detail: 'shutting down' }]);
    }
    const checks = Object.fromEntries(entries);
    return { ready: entries.every(([, result]) => result.ok || !result.required), checks };
  }

  private async postgres(): Promise<CheckResult> {
    await this.dataSource.query('SELECT 1');
    const pending = await this.dataSource.showMigrations();
    return pending
      ? { ok: false, required: true, detail: 'migrations are pending: run npm run migration:run' }
      : { ok: true, required: true, detail: 'reachable, migrations applied' };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
