import { qdrantRead } from './qdrant-connection';

/** fetch's failure as undici gives it: a TypeError whose cause names the socket's fate. */
function fetchFailed(code: string): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
}

describe('qdrantRead', () => {
  it.each(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE'])(
    'asks once more when the connection was closed before an answer (%s)',
    async (code) => {
      let calls = 0;
      const read = () =>
        ++calls === 1 ? Promise.reject(fetchFailed(code)) : Promise.resolve('hits');
      await expect(qdrantRead('search', read)).resolves.toBe('hits');
      expect(calls).toBe(2);
    },
  );

  it('asks only once more, and then names the failure', async () => {
    let calls = 0;
    const read = () => {
      calls++;
      return Promise.reject(fetchFailed('ECONNRESET'));
    };
    await expect(qdrantRead('search', read)).rejects.toThrow(
      'Qdrant search failed: connection reset',
    );
    expect(calls).toBe(2);
  });

  it.each([
    ['a refused connection', fetchFailed('ECONNREFUSED'), 'connection refused'],
    ['an answer of an error', { status: 500, statusText: 'Internal Server Error' }, 'HTTP 500'],
    ['a timeout', { name: 'QdrantClientTimeoutError' }, 'no answer in time'],
  ])('does not ask again after %s', async (_what, error, reason) => {
    let calls = 0;
    const read = () => {
      calls++;
      return Promise.reject(error);
    };
    await expect(qdrantRead('search', read)).rejects.toThrow(`Qdrant search failed: ${reason}`);
    expect(calls).toBe(1);
  });
});
