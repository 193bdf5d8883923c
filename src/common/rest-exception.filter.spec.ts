import type { Request } from 'express';
import { ErrorCode } from './domain-error';
import { restStatus } from './rest-exception.filter';

const plain = { headers: {} } as Request;
const withIfMatch = { headers: { 'if-match': '"3"' } } as unknown as Request;

describe('restStatus', () => {
  it.each([
    [ErrorCode.NOT_FOUND, 404],
    [ErrorCode.ALREADY_EXISTS, 409],
    [ErrorCode.REVISION_CONFLICT, 409],
    [ErrorCode.PATCH_NO_MATCH, 422],
    [ErrorCode.PATCH_AMBIGUOUS, 409],
    [ErrorCode.INVALID_ARGUMENT, 400],
    [ErrorCode.TOO_LARGE, 413],
    [ErrorCode.FORBIDDEN_URL, 403],
    [ErrorCode.UPSTREAM_ERROR, 502],
    [ErrorCode.NOT_IMPLEMENTED, 501],
  ])('maps %s to %i (docs/documents.md)', (code, status) => {
    expect(restStatus(code, plain)).toBe(status);
  });

  it('maps every code', () => {
    for (const code of Object.values(ErrorCode)) expect(restStatus(code, plain)).toBeGreaterThan(0);
  });

  it('answers REVISION_CONFLICT with 412 when the request used If-Match', () => {
    expect(restStatus(ErrorCode.REVISION_CONFLICT, withIfMatch)).toBe(412);
    expect(restStatus(ErrorCode.PATCH_AMBIGUOUS, withIfMatch)).toBe(409);
  });
});
