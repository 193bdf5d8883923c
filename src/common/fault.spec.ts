import { DomainError, ErrorCode } from './domain-error';
import { faultOf, safeMessage } from './fault';

describe('faults', () => {
  it('turns a database outage into UNAVAILABLE with the retry delay, and leaves other errors alone', () => {
    const outage = faultOf(
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    );
    expect(outage).toBeInstanceOf(DomainError);
    expect(outage?.toJSON()).toEqual({
      code: ErrorCode.UNAVAILABLE,
      message: "the knowledge base's database is not reachable right now; retry in 5 seconds",
      retry_after_seconds: 5,
    });
    expect(faultOf(new Error('boom'))).toBeUndefined();
    expect(faultOf(new DomainError(ErrorCode.NOT_FOUND, 'x'))).toBeUndefined();
  });

  it.each([
    ['connect ECONNREFUSED 127.0.0.1:5432', 'connect ECONNREFUSED <internal>'],
    ['getaddrinfo ENOTFOUND qdrant.internal:6333', 'getaddrinfo ENOTFOUND <internal>'],
    ['request to http://10.0.0.7:8000/v1/embeddings failed', 'request to <internal> failed'],
    ['connect ECONNREFUSED [::1]:6333', 'connect ECONNREFUSED <internal>'],
    [
      "ENOENT: no such file, open '/var/lib/agent/data/pg.conf'",
      "ENOENT: no such file, open '<internal>'",
    ],
    ['the embedder answered HTTP 429', 'the embedder answered HTTP 429'],
  ])('%p → %p', (message, safe) => {
    expect(safeMessage(message)).toBe(safe);
  });
});
