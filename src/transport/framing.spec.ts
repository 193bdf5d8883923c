import {
  JSON_HEADERS,
  PreSerialized,
  serialize,
  serializeBytes,
  SSE_HEADERS,
  sseEventBytes,
} from './framing';

const envelope = { jsonrpc: '2.0', id: 1, result: { text: 'line 1\nline 2\r\n\u2028end' } };

describe('framing', () => {
  it('frames JSON with a utf-8 JSON content type', () => {
    expect(JSON_HEADERS).toEqual({ 'Content-Type': 'application/json; charset=utf-8' });
    expect(serializeBytes(envelope).toString('utf8')).toBe(JSON.stringify(envelope));
  });

  it('frames one SSE event with the anti-buffering headers', () => {
    expect(SSE_HEADERS).toEqual({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
    });
    expect(sseEventBytes(envelope).toString('utf8')).toBe(
      `event: message\ndata: ${JSON.stringify(envelope)}\n\n`,
    );
  });

  it('keeps the envelope on one data line even when strings hold newlines', () => {
    const lines = sseEventBytes(envelope).toString('utf8').split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe('event: message');
    expect(JSON.parse(lines[1].slice('data: '.length))).toEqual(envelope);
    expect(lines.slice(2)).toEqual(['', '']);
    expect(lines[1]).not.toMatch(/\r/);
  });

  it('frames a batch as one event holding the array', () => {
    const batch = [envelope, { ...envelope, id: 2 }];
    const data = sseEventBytes(batch).toString('utf8').split('\n')[1].slice('data: '.length);
    expect(JSON.parse(data)).toEqual(batch);
  });
});

describe('pre-serialised results', () => {
  it('splices a PreSerialized result into the envelope, alone or in a batch', () => {
    const result = PreSerialized.of({ tools: [{ name: 'a' }] });
    const envelope = { jsonrpc: '2.0', id: 'x"y', result };
    const expected = { jsonrpc: '2.0', id: 'x"y', result: { tools: [{ name: 'a' }] } };
    expect(JSON.parse(serialize(envelope))).toEqual(expected);
    expect(JSON.parse(serialize([envelope, { jsonrpc: '2.0', id: 2, result: {} }]))).toEqual([
      expected,
      { jsonrpc: '2.0', id: 2, result: {} },
    ]);
    expect(JSON.parse(serializeBytes(envelope).toString('utf8'))).toEqual(expected);
    expect(JSON.parse(sseEventBytes(envelope).toString('utf8').split('\n')[1].slice(6))).toEqual(
      expected,
    );
  });

  it('writes the same bytes as the plain serialisation, characters beyond Latin-1 included', () => {
    const value = { description: 'Guide › Install — 😀, ünïcödé', n: 1 };
    const result = PreSerialized.of(value);
    for (const id of [7, 'a"b', null]) {
      const plain = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, result: value }));
      expect(serializeBytes({ jsonrpc: '2.0', id, result })).toEqual(plain);
      // Twice: the second use copies the bytes kept from the first.
      expect(serializeBytes({ jsonrpc: '2.0', id, result })).toEqual(plain);
    }
  });
});
