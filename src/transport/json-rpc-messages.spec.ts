import { JSONRPCRequestSchema } from '@modelcontextprotocol/sdk/types.js';
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

describe('requests recognised without the schema', () => {
  const meta = (value: unknown) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/list',
    params: { _meta: value },
  });
  /** Near-misses around every check of the shortcut, each decided as the SDK schema decides. */
  const CASES: unknown[] = [
    { jsonrpc: '2.0', id: 1, method: 'ping' },
    { method: 'ping', id: 'x', jsonrpc: '2.0' },
    { jsonrpc: '2.0', id: 0, method: '' },
    { jsonrpc: '2.0', id: -7, method: 'ping', params: {} },
    { jsonrpc: '2.0', id: 2 ** 53, method: 'ping' },
    { jsonrpc: '2.0', id: 2 ** 53 - 1, method: 'ping' },
    { jsonrpc: '2.0', id: 1.5, method: 'ping' },
    { jsonrpc: '2.0', id: null, method: 'ping' },
    { jsonrpc: '2.0', id: true, method: 'ping' },
    { jsonrpc: '2.0', method: 'ping' },
    { jsonrpc: 2, id: 1, method: 'ping' },
    { jsonrpc: '2.0', id: 1, method: 'ping', params: null },
    { jsonrpc: '2.0', id: 1, method: 'ping', params: [] },
    { jsonrpc: '2.0', id: 1, method: 'ping', params: 'x' },
    { jsonrpc: '2.0', id: 1, method: 'ping', extra: 1 },
    { jsonrpc: '2.0', id: 1, method: 'ping', params: { cursor: 'c', any: [1, { x: 2 }] } },
    meta({}),
    meta(null),
    meta([]),
    meta('x'),
    meta({ progressToken: 'p' }),
    meta({ progressToken: 3 }),
    meta({ progressToken: 3.5 }),
    meta({ progressToken: null }),
    meta({ progressToken: {} }),
    meta({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28', other: { deep: [1] } }),
    meta({ 'io.modelcontextprotocol/related-task': { taskId: 't' } }),
    meta({ 'io.modelcontextprotocol/related-task': { taskId: 1 } }),
    JSON.parse('{"jsonrpc":"2.0","id":1,"method":"ping","__proto__":{"x":1}}'),
    JSON.parse('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"__proto__":{}}}'),
    JSON.parse('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"__proto__":{}}}}'),
    { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: undefined } },
  ];

  it.each(CASES.map((value) => [JSON.stringify(value), value]))(
    '%s: a request exactly when the SDK schema says so, with the same content',
    (_text, value) => {
      const schema = JSONRPCRequestSchema.safeParse(value);
      const message = classify(value);
      expect(message.kind === 'request').toBe(schema.success);
      if (message.kind === 'request') expect(message.message).toEqual(schema.data);
    },
  );
});
