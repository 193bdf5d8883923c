import { LineSplitter } from './stdio-lines';

describe('LineSplitter', () => {
  function split(chunks: Array<string | Buffer>, maxBytes = 16) {
    const lines: string[] = [];
    const oversized: number[] = [];
    const splitter = new LineSplitter(
      maxBytes,
      (line) => lines.push(line),
      (bytes) => oversized.push(bytes),
    );
    for (const chunk of chunks) splitter.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    splitter.end();
    return { lines, oversized };
  }

  it('splits on newlines across chunks, drops CR and blank lines, keeps a last unterminated line', () => {
    expect(split(['{"a":', '1}\r\n\n{"b"', ':2}\n', '{"c":3}']).lines).toEqual([
      '{"a":1}',
      '{"b":2}',
      '{"c":3}',
    ]);
  });

  it('decodes UTF-8 split between chunks', () => {
    const bytes = Buffer.from('"é中"\n');
    expect(split([bytes.subarray(0, 2), bytes.subarray(2, 4), bytes.subarray(4)]).lines).toEqual([
      '"é中"',
    ]);
  });

  it('refuses a line over the limit without holding it, and goes on with the next', () => {
    const { lines, oversized } = split(['0123456789', '0123456789', '01234\n', '{"ok":1}\n'], 16);
    expect(oversized).toEqual([25]);
    expect(lines).toEqual(['{"ok":1}']);
  });

  it('takes a line of exactly the limit', () => {
    expect(split(['x'.repeat(16), '\n']).lines).toEqual(['x'.repeat(16)]);
  });
});
