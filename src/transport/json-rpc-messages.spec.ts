import { classify, parseBody } from './json-rpc-messages';

describe('JSON-RPC message sorting', () => {
  it('sorts requests, notifications and client responses', () => {
    expect(classify({ jsonrpc: '2.0', id: 1, method: 'ping' }).kind).toBe('request');
    expect(classify({ jsonrpc: '2.0', id: 'a', method: 'tools/list', params: {} }).kind).toBe(
      'request',
    );
    expect(classify({ jsonrpc: '2.0', method: 'notifications/initialized' }).kind).toBe(
      'notification',
    );
    expect(classify({ jsonrpc: '2.0', id: 7, result: {} }).kind).toBe('response');
    expect(classify({ jsonrpc: '2.0', id: 7, error: { code: -1, message: 'x' } }).kind).toBe(
      'response',
    );
  });

  it.each([
    [{ id: 1, method: 'ping' }, 1, 'jsonrpc must be "2.0"'],
    [{ jsonrpc: '1.0', id: 1, method: 'ping' }, 1, 'jsonrpc must be "2.0"'],
    [{ jsonrpc: '2.0', id: 2 }, 2, 'method is required'],
    [{ jsonrpc: '2.0', id: 3, method: 42 }, 3, 'method must be a string'],
    [{ jsonrpc: '2.0', id: null, method: 'ping' }, null, 'id must be a string or an integer'],
    [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, null, 'id must be a string or an integer'],
    [{ jsonrpc: '2.0', id: 4, method: 'ping', params: [1] }, 4, 'params must be a JSON object'],
    [{ jsonrpc: '2.0', id: 5, method: 'ping', extra: true }, 5, 'unknown member'],
    ['ping', null, 'must be a JSON object'],
    [42, null, 'must be a JSON object'],
    [null, null, 'must be a JSON object'],
  ])('marks %j invalid (id %p): %s', (value, id, reason) => {
    const message = classify(value);
    expect(message).toMatchObject({ kind: 'invalid', id });
    expect(message.kind === 'invalid' && message.reason).toContain(reason);
  });

  it('keeps a single message apart from a batch', () => {
    expect(parseBody({ jsonrpc: '2.0', id: 1, method: 'ping' })).toMatchObject({
      ok: true,
      batch: false,
    });
    const batch = parseBody([{ jsonrpc: '2.0', id: 1, method: 'ping' }, 3]);
    expect(batch).toMatchObject({ ok: true, batch: true });
    expect(batch.ok && batch.messages.map((m) => m.kind)).toEqual(['request', 'invalid']);
  });

  it('refuses an empty batch, an oversized one, and initialize inside a batch', () => {
    expect(parseBody([])).toEqual({ ok: false, reason: 'Invalid Request: empty batch' });
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    expect(parseBody(Array(101).fill(ping))).toMatchObject({ ok: false });
    expect(parseBody(Array(100).fill(ping))).toMatchObject({ ok: true });
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} };
    expect(parseBody([init, ping])).toEqual({
      ok: false,
      reason: 'Invalid Request: initialize must not be part of a batch',
    });
  });
});
