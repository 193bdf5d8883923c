import { frameJson, frameSse, PreSerialized, serialize } from './framing';

const envelope = { jsonrpc: '2.0', id: 1, result: { text: 'line 1\nline 2\r\n\u2028end' } };

describe('framing', () => {
  it('frames JSON with a utf-8 JSON content type', () => {
    const framed = frameJson(200, envelope);
    expect(framed).toEqual({
      status: 200,
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
      body: JSON.stringify(envelope),
    });
  });

  it('frames one SSE event with the anti-buffering headers', () => {
    const framed = frameSse(400, envelope);
    expect(framed.status).toBe(400);
    expect(framed.headers).toEqual({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
    });
    expect(framed.body).toBe(`event: message\ndata: ${JSON.stringify(envelope)}\n\n`);
  });

  it('keeps the envelope on one data line even when strings hold newlines', () => {
    const lines = frameSse(200, envelope).body.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe('event: message');
    expect(JSON.parse(lines[1].slice('data: '.length))).toEqual(envelope);
    expect(lines.slice(2)).toEqual(['', '']);
    expect(lines[1]).not.toMatch(/\r/);
  });

  it('frames a batch as one event holding the array', () => {
    const batch = [envelope, { ...envelope, id: 2 }];
    const data = frameSse(200, batch).body.split('\n')[1].slice('data: '.length);
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
    expect(JSON.parse(frameJson(200, envelope).body)).toEqual(expected);
    expect(JSON.parse(frameSse(200, envelope).body.split('\n')[1].slice(6))).toEqual(expected);
  });
});
