import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { readFileSync, statSync, unwatchFile, watchFile } from 'node:fs';
import { extname } from 'node:path';
import { Counter } from 'prom-client';
import type { Principal } from '../auth/api-key.service';
import { AppConfig } from '../config/app-config';
import { ConfigError } from '../config/config-values';
import { Access } from './access';
import { MetricsService } from '../metrics/metrics.service';
import { AccessPolicy, MAX_POLICY_BYTES, PolicyError } from './access-policy';

/** Where a refusal happened, the label of `access_denied_total`. */
export type AccessSurface = 'mcp' | 'rest';

/** How often the policy file is looked at for a change. */
const WATCH_INTERVAL_MS = 1000;

/**
 * The access policy in force (`ACCESS_POLICY` or `ACCESS_POLICY_FILE`) and what it gives
 * each principal. A bad policy at start-up stops the server (ConfigError); a bad file later
 * (it is read again when it changes and on SIGHUP) keeps the last good policy and logs one
 * line naming the problem. Without a policy, and with authentication off, every principal has
 * {@link Access.EVERYTHING}: what its profile allows, as before.
 */
@Injectable()
export class AccessPolicyService implements OnApplicationShutdown {
  private readonly logger = new Logger('AccessPolicy');
  private policy: AccessPolicy | undefined;
  /** The access of each principal (API keys' principals live as long as the process). */
  private given = new WeakMap<Principal, Map<AccessSurface, Access>>();
  /** Changes when the policy does: what `given` was computed under. */
  private generation = 0;
  private givenAt = 0;
  private readonly file: string | undefined;
  private readonly denied: Counter<'surface'>;
  private readonly onHangUp = () => this.reload('SIGHUP');

  constructor(
    private readonly config: AppConfig,
    metrics: MetricsService,
  ) {
    this.denied = new Counter({
      name: 'access_denied_total',
      help: 'Reads and writes refused by the access policy, by surface',
      labelNames: ['surface'] as const,
      registers: [metrics.registry],
    });
    const source = config.accessPolicy;
    if (source === undefined) return;
    const variable = 'file' in source ? 'ACCESS_POLICY_FILE' : 'ACCESS_POLICY';
    try {
      this.policy =
        'file' in source ? readPolicyFile(source.file) : AccessPolicy.parse(source.text, 'json');
    } catch (error) {
      if (error instanceof PolicyError) throw new ConfigError(variable, error.message);
      throw error;
    }
    if (!config.authEnabled) {
      this.logger.warn(
        `${variable} is set but authentication is off (no API_KEYS, no OAUTH_ISSUER): the policy does not apply`,
      );
    } else {
      this.logger.log(`access policy: ${this.policy.ruleCount} rules from ${variable}`);
    }
    if ('file' in source) {
      this.file = source.file;
      watchFile(this.file, { interval: WATCH_INTERVAL_MS }, (now, before) => {
        if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) this.reload('a change');
      });
      process.on('SIGHUP', this.onHangUp);
    }
  }

  /** Whether a policy is in force (set, and authentication on). */
  get active(): boolean {
    return this.policy !== undefined && this.config.authEnabled;
  }

  /**
   * What `principal` may read and write under the policy in force now; refusals are counted
   * under `surface`.
   */
  accessOf(principal: Principal, surface: AccessSurface): Access {
    const policy = this.policy;
    if (policy === undefined || principal.via === 'local') return Access.EVERYTHING;
    if (this.givenAt !== this.generation) {
      this.given = new WeakMap();
      this.givenAt = this.generation;
    }
    let bySurface = this.given.get(principal);
    if (bySurface === undefined) this.given.set(principal, (bySurface = new Map()));
    let access = bySurface.get(surface);
    if (access === undefined) {
      access = this.compute(policy, principal, surface);
      bySurface.set(surface, access);
    }
    return access;
  }

  private compute(policy: AccessPolicy, principal: Principal, surface: AccessSurface): Access {
    const { read, write } = policy.accessOf({
      key: principal.via === 'key' ? principal.name : undefined,
      scopes: principal.scopes,
      groups: principal.groups,
      subject: principal.via === 'token' ? principal.subject : undefined,
      route: principal.via === 'route' ? 'gpt' : undefined,
    });
    return new Access(read, write, () => this.denied.inc({ surface }));
  }

  /** Reads the policy file again; a bad one keeps the policy in force. */
  reload(why: string): boolean {
    if (this.file === undefined) return false;
    try {
      const policy = readPolicyFile(this.file);
      this.policy = policy;
      this.generation++;
      this.logger.log(`access policy read again after ${why}: ${policy.ruleCount} rules`);
      return true;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.error(
        `ACCESS_POLICY_FILE ${this.file} not applied (${why}): ${reason}; the last good policy stays in force`,
      );
      return false;
    }
  }

  onApplicationShutdown(): void {
    if (this.file !== undefined) unwatchFile(this.file);
    process.removeListener('SIGHUP', this.onHangUp);
  }
}

/** Reads and parses a policy file (YAML for `.yaml`/`.yml`, else JSON); refuses a huge one unread. */
function readPolicyFile(file: string): AccessPolicy {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (error) {
    throw new PolicyError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  if (size > MAX_POLICY_BYTES) {
    throw new PolicyError(`${file} is ${size} bytes, over the limit of ${MAX_POLICY_BYTES}`);
  }
  const yaml = ['.yaml', '.yml'].includes(extname(file).toLowerCase());
  try {
    return AccessPolicy.parse(readFileSync(file, 'utf8'), yaml ? 'yaml' : 'json');
  } catch (error) {
    if (error instanceof PolicyError) throw new PolicyError(`${file}: ${error.message}`);
    throw new PolicyError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
}
