import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';
import { faultOf } from '../common/fault';
import { PreparedStatements } from '../database/prepared-statements';
import {
  IdempotencyRepository,
  type KeyedRequest,
  type StoredAnswer,
} from './idempotency.repository';

/** How long a key and its answer are kept: a retry later than this writes again. */
export const KEY_TTL_SECONDS = 24 * 60 * 60;

/**
 * How long a `running` claim holds its key: after it, a retry of the same request takes the
 * claim over (its first claimant died, or lost its database connection). Longer than any
 * write runs; the claim's token keeps a slow first claimant that is still alive from
 * committing after a takeover.
 */
export const CLAIM_LEASE_SECONDS = 60;

/** Seconds a retry is told to wait while the first request with its key runs. */
const IN_USE_RETRY_AFTER_SECONDS = 1;

/** What {@link IdempotencyService.once} answers: the answer, and whether it was stored. */
export interface Outcome {
  readonly answer: StoredAnswer;
  readonly replayed: boolean;
}

/**
 * Retry-safe writes (docs/documents.md, "Retrying writes safely"): a request sent with an
 * idempotency key runs once; its retries get its first answer.
 *
 * The key is claimed first, on its own (a concurrent retry sees the claim and is told to
 * wait); then the write runs in one transaction that also stores its answer, so that either
 * both are committed or neither is. No transaction is held while the key is merely claimed,
 * and a process killed mid-write leaves a claim with nothing written behind it, which the
 * next retry takes over once the lease has passed.
 */
@Injectable()
export class IdempotencyService {
  constructor(
    private readonly repository: IdempotencyRepository,
    private readonly statements: PreparedStatements,
  ) {}

  /**
   * Runs `write` once for `request`, or answers the answer stored for it.
   *
   * `write` answers what the client is to get; a DomainError it throws (a refusal, not an
   * outage) is stored too, as `failure` turns it into an answer, and thrown again once
   * committed, so that a retry gets the same refusal. Anything else (an outage, a bug)
   * rolls the write back and frees the key.
   *
   * Throws IDEMPOTENCY_KEY_REUSED when the key was used for another request, and
   * IDEMPOTENCY_KEY_IN_USE while the first request with it runs.
   *
   * `admit`, when given, runs once the key is claimed and before the write (a replay never
   * reaches it): what it throws frees the key and is thrown, nothing written (a rate limit).
   */
  async once(
    request: KeyedRequest,
    write: () => Promise<StoredAnswer>,
    failure: (error: DomainError) => StoredAnswer,
    admit?: () => Promise<void>,
  ): Promise<Outcome> {
    const token = randomUUID();
    let claim = await this.repository.claim(request, token, CLAIM_LEASE_SECONDS, KEY_TTL_SECONDS);
    claim ??= await this.repository.claim(request, token, CLAIM_LEASE_SECONDS, KEY_TTL_SECONDS);
    if (claim === undefined || claim.kind === 'taken') {
      if (claim !== undefined && claim.fingerprint !== request.fingerprint) throw reused(request);
      if (claim?.state === 'done') return { answer: claim.answer, replayed: true };
      throw inUse(request);
    }

    let written: { answer: StoredAnswer; refusal?: DomainError };
    try {
      await admit?.();
      written = await this.statements.transaction(async () => {
        let answer: StoredAnswer;
        let refusal: DomainError | undefined;
        try {
          answer = await write();
        } catch (error) {
          if (!(error instanceof DomainError) || faultOf(error) !== undefined) throw error;
          refusal = error;
          answer = failure(error);
        }
        // Taken over by a retry after the lease: this write is rolled back, the retry's stands.
        if (!(await this.repository.complete(request, token, answer))) throw inUse(request);
        return { answer, refusal };
      });
    } catch (error) {
      // Nothing was committed, unless the connection broke during COMMIT itself: the claim
      // is then `done` (and not released) or still `running` (and released here, or taken
      // over after the lease when the database cannot be reached now).
      await this.repository.release(request, token).catch(() => undefined);
      throw error;
    }
    if (written.refusal !== undefined) throw written.refusal;
    return { answer: written.answer, replayed: false };
  }
}

function reused(request: KeyedRequest): DomainError {
  return new DomainError(
    ErrorCode.IDEMPOTENCY_KEY_REUSED,
    `idempotency key ${JSON.stringify(request.key)} was already used for another request; use a new key for each distinct write`,
    { idempotency_key: request.key },
  );
}

function inUse(request: KeyedRequest): DomainError {
  return new DomainError(
    ErrorCode.IDEMPOTENCY_KEY_IN_USE,
    `the first request with idempotency key ${JSON.stringify(request.key)} is still running; retry in ${IN_USE_RETRY_AFTER_SECONDS} s for its answer`,
    { idempotency_key: request.key, retry_after_seconds: IN_USE_RETRY_AFTER_SECONDS },
  );
}
