import { isDatabaseUnavailable, unavailableKind } from './database-errors';

function withCode(code: string, message = 'x'): Error {
  return Object.assign(new Error(message), { code });
}

describe('database unavailability', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', withCode('ECONNRESET')],
    [
      'admin shutdown (57P01)',
      withCode('57P01', 'terminating connection due to administrator command'),
    ],
    ['starting up (57P03)', withCode('57P03', 'the database system is starting up')],
    ['a connection exception (08006)', withCode('08006')],
    ['too many connections (53300)', withCode('53300')],
    ['a terminated connection', new Error('Connection terminated unexpectedly')],
    ['a pool that waited too long', new Error('timeout exceeded when trying to connect')],
    [
      'a TypeORM error around one',
      Object.assign(new Error('query failed'), { driverError: withCode('57P01') }),
    ],
    ['a cause', new Error('outer', { cause: withCode('ECONNREFUSED') })],
    [
      'every address refused',
      Object.assign(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]), {
        code: undefined,
      }),
    ],
  ])('%s → unavailable', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a syntax error', withCode('42601')],
    ['a serialization failure', withCode('40001')],
    ['a plain error', new Error('boom')],
    ['nothing', undefined],
    ['a string', 'ECONNREFUSED'],
  ])('%s → not unavailable', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('names the kind of failure by its code, never its address', () => {
    expect(unavailableKind(withCode('ECONNREFUSED', 'connect ECONNREFUSED 10.1.2.3:5432'))).toBe(
      'ECONNREFUSED',
    );
    expect(unavailableKind(Object.assign(new Error('q'), { driverError: withCode('57P01') }))).toBe(
      '57P01',
    );
    expect(unavailableKind(new Error('Connection terminated unexpectedly'))).toBe('unreachable');
  });
});
