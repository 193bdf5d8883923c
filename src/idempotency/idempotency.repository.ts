import { Injectable } from '@nestjs/common';
import { PreparedStatements } from '../database/prepared-statements';

/** The answer kept with a key: what a retry is answered with. */
export interface StoredAnswer {
  /** The HTTP status (on the MCP edge, the status the REST edge gives the same outcome). */
  readonly status: number;
  /** The answer headers worth repeating (ETag, Location, Preference-Applied). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** One key of one principal, with the fingerprint of the request that uses it. */
export interface KeyedRequest {
  readonly owner: string;
  readonly key: string;
  readonly fingerprint: string;
}

/** What {@link IdempotencyRepository.claim} found: the key is ours now, or it is taken. */
export type Claim =
  | { kind: 'claimed' }
  | { kind: 'taken'; fingerprint: string; state: 'running' }
  | { kind: 'taken'; fingerprint: string; state: 'done'; answer: StoredAnswer };

/**
 * All SQL of `kb_idempotency_keys` (migrations/1763800150000-idempotency-keys.ts). The rules
 * (when a claim may be taken over, what a retry is answered) are IdempotencyService's.
 */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly statements: PreparedStatements) {}

  /**
   * Claims the key for `request` under `token`, in one statement committed on its own: a new
   * key, an expired one (older than `ttlSeconds`: forgotten) and a `running` claim of the same
   * request older than `leaseSeconds` (its claimant died or gave up) become this claim;
   * anything else is answered as it stands.
   */
  async claim(
    request: KeyedRequest,
    token: string,
    leaseSeconds: number,
    ttlSeconds: number,
  ): Promise<Claim | undefined> {
    const claimed = await this.statements.write(
      'kb_idempotency_keys_claim',
      `INSERT INTO kb_idempotency_keys AS k (principal, key, fingerprint, state, token)
       VALUES ($1, $2, $3, 'running', $4)
       ON CONFLICT (principal, key) DO UPDATE
          SET fingerprint = EXCLUDED.fingerprint, state = 'running', token = EXCLUDED.token,
              answer = NULL, claimed_at = now(),
              created_at = CASE WHEN k.created_at < now() - make_interval(secs => $6)
                                THEN now() ELSE k.created_at END
        WHERE k.created_at < now() - make_interval(secs => $6)
           OR (k.state = 'running' AND k.fingerprint = EXCLUDED.fingerprint
               AND k.claimed_at < now() - make_interval(secs => $5))
       RETURNING 1`,
      [request.owner, request.key, request.fingerprint, token, leaseSeconds, ttlSeconds],
    );
    if (claimed.length > 0) return { kind: 'claimed' };
    const [row] = await this.statements.query<{
      fingerprint: string;
      state: 'running' | 'done';
      answer: StoredAnswer | null;
    }>(
      'kb_idempotency_keys_find',
      `SELECT fingerprint, state, answer FROM kb_idempotency_keys WHERE principal = $1 AND key = $2`,
      [request.owner, request.key],
    );
    // Gone since the claim looked (expired and deleted): the caller claims again.
    if (row === undefined) return undefined;
    return row.state === 'done'
      ? { kind: 'taken', fingerprint: row.fingerprint, state: 'done', answer: row.answer! }
      : { kind: 'taken', fingerprint: row.fingerprint, state: 'running' };
  }

  /**
   * Stores the answer of the claim `token` (in the transaction of its write, when there is
   * one). `false` when the claim is not `token`'s any more: another request took it over.
   */
  async complete(request: KeyedRequest, token: string, answer: StoredAnswer): Promise<boolean> {
    const rows = await this.statements.write(
      'kb_idempotency_keys_complete',
      `UPDATE kb_idempotency_keys SET state = 'done', answer = $4::json
        WHERE principal = $1 AND key = $2 AND token = $3 AND state = 'running'
       RETURNING 1`,
      [request.owner, request.key, token, JSON.stringify(answer)],
    );
    return rows.length > 0;
  }

  /** Drops the claim `token` when it is still running: nothing of its write was committed. */
  async release(request: KeyedRequest, token: string): Promise<void> {
    await this.statements.write(
      'kb_idempotency_keys_release',
      `DELETE FROM kb_idempotency_keys
        WHERE principal = $1 AND key = $2 AND token = $3 AND state = 'running'`,
      [request.owner, request.key, token],
    );
  }

  /** Deletes up to `limit` keys older than `ttlSeconds`, oldest first; returns how many. */
  async deleteExpired(ttlSeconds: number, limit: number): Promise<number> {
    const rows = await this.statements.write(
      'kb_idempotency_keys_expire',
      `DELETE FROM kb_idempotency_keys
        WHERE (principal, key) IN (
              SELECT principal, key FROM kb_idempotency_keys
               WHERE created_at < now() - make_interval(secs => $1)
               ORDER BY created_at
               LIMIT $2)
       RETURNING 1`,
      [ttlSeconds, limit],
    );
    return rows.length;
  }
}
