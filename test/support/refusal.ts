import { DomainError } from '../../src/common/domain-error';

/** The DomainError `run` throws; fails the test when it throws nothing, or something else. */
export function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError, nothing was thrown');
}
