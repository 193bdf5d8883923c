/** Error codes shared by tool results and REST bodies (docs/documents.md). */
export enum ErrorCode {
  NOT_FOUND = 'NOT_FOUND',
  /** The access policy lets the caller read the document, not write it. */
  PERMISSION_DENIED = 'PERMISSION_DENIED',
  ALREADY_EXISTS = 'ALREADY_EXISTS',
  REVISION_CONFLICT = 'REVISION_CONFLICT',
  PATCH_NO_MATCH = 'PATCH_NO_MATCH',
  PATCH_AMBIGUOUS = 'PATCH_AMBIGUOUS',
  INVALID_ARGUMENT = 'INVALID_ARGUMENT',
  TOO_LARGE = 'TOO_LARGE',
  FORBIDDEN_URL = 'FORBIDDEN_URL',
  UPSTREAM_ERROR = 'UPSTREAM_ERROR',
  NOT_IMPLEMENTED = 'NOT_IMPLEMENTED',
  /** A dependency (PostgreSQL) is down for now: the same request should work later. */
  UNAVAILABLE = 'UNAVAILABLE',
  /** An idempotency key already used by this caller for another request. */
  IDEMPOTENCY_KEY_REUSED = 'IDEMPOTENCY_KEY_REUSED',
  /** The first request with this idempotency key is still running: retry in a moment. */
  IDEMPOTENCY_KEY_IN_USE = 'IDEMPOTENCY_KEY_IN_USE',
  /** A restore into a knowledge base that already holds documents, audit rows or sources. */
  NOT_EMPTY = 'NOT_EMPTY',
  /** A backup that is cut, corrupt, of another format or of a newer schema. */
  INVALID_BACKUP = 'INVALID_BACKUP',
}

/**
 * A failure the caller can act on. Services throw it; each edge (REST, MCP) maps the code
 * to its own answer in one place. `details` is serialised beside code and message.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }

  toJSON(): { code: ErrorCode; message: string } & Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details };
  }
}

export const invalidArgument = (field: string, problem: string): DomainError =>
  new DomainError(ErrorCode.INVALID_ARGUMENT, `${field}: ${problem}`, { field });
