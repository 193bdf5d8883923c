import { binaryCopyRows } from './binary-copy';

/** Binary COPY output of rows of fields, written out as PostgreSQL writes it. */
function copyOutput(rows: ReadonlyArray<ReadonlyArray<Buffer | null>>): Buffer {
  const int = (bytes: number, value: number) => {
    const b = Buffer.alloc(bytes);
    if (bytes === 2) b.writeInt16BE(value);
    else b.writeInt32BE(value);
    return b;
  };
  return Buffer.concat([
    Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'),
    int(4, 0),
    int(4, 3),
    Buffer.from('ext'),
    ...rows.flatMap((row) => [
      int(2, row.length),
      ...row.flatMap((field) => (field === null ? [int(4, -1)] : [int(4, field.length), field])),
    ]),
    int(2, -1),
  ]);
}

async function* chunksOf(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function rowsOf(chunks: AsyncIterable<Buffer>): Promise<Array<Array<Buffer | null>>> {
  const rows: Array<Array<Buffer | null>> = [];
  for await (const row of binaryCopyRows(chunks)) rows.push(row);
  return rows;
}

describe('binaryCopyRows', () => {
  const rows = [
    [Buffer.from([0, 0, 0, 1]), Buffer.alloc(3000, 7), null],
    [Buffer.from([0, 0, 0, 2]), Buffer.alloc(0), Buffer.from('last')],
  ];
  const output = copyOutput(rows);

  it.each([1, 3, 64, 100_000])('reads the rows whatever the chunks (%i bytes)', async (size) => {
    expect(await rowsOf(chunksOf(output, size))).toEqual(rows);
  });

  it('refuses output that is not binary COPY, or ends inside a row', async () => {
    await expect(rowsOf(chunksOf(Buffer.from('a\tb\n'.repeat(10)), 8))).rejects.toThrow(
      /not the output/,
    );
    await expect(rowsOf(chunksOf(output.subarray(0, 100), 8))).rejects.toThrow(/ended inside/);
  });
});
